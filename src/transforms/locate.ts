import { SourceMap, type SourceMapPayload, type SourceMapping } from 'node:module';
import type { TransformFailureSite } from '../errors.js';

/** The name the bundle runs under in the isolate: the V8 frames of the transform's code name it. */
export const BUNDLE_FILENAME = 'transform.js';

/** The author's frames kept, at most. */
const MAX_FRAMES = 5;
/** A source line in a code frame, at most (a minified line is cut around the column). */
const MAX_LINE_CHARS = 120;

// `    at name (transform.js:34:31)`, `    at transform.js:34:31`, `    at async name (transform.js:3:9)`
const FRAME = /^\s*at (?:(.*?) \()?transform\.js:(\d+):(\d+)\)?\s*$/;

/**
 * A bundle's source map, kept on the host (the isolate never sees it): it turns the V8 frames
 * of the bundle into the author's `file:line:column` (docs/transforms.md#when-a-transform-throws).
 */
export interface BundleMap {
  /** The site of an error thrown in the bundle, from its stack; empty when no frame is the author's. */
  locate(stack: string | undefined): TransformFailureSite;
}

/**
 * Builds the map of a bundle of `bundleLines` lines (frames below them are the sandbox's own
 * code, which follows the bundle in the same script). `sources` are relative to the transforms
 * folder, so nothing of the host's file system reaches an answer.
 */
export function createBundleMap(payload: SourceMapPayload, bundleLines: number): BundleMap {
  const map = new SourceMap(payload);
  const contents = payload.sourcesContent ?? [];

  /** The author's position of one bundle position (1-based), if the map has one on that line. */
  function original(line: number, column: number): SourceMapping | undefined {
    if (line < 1 || line > bundleLines) return undefined;
    const entry = map.findEntry(line - 1, column - 1);
    // findEntry answers the nearest mapping before the position, maybe on an earlier line: an
    // esbuild helper (no mapping of its own) would otherwise be blamed on the line above it.
    if (!('originalSource' in entry) || entry.generatedLine !== line - 1 || !entry.originalSource) return undefined;
    return entry;
  }

  return {
    locate(stack) {
      const frames: string[] = [];
      let first: SourceMapping | undefined;
      for (const text of (stack ?? '').split('\n')) {
        // What follows is the host's side of the call.
        if (text.includes('<isolated-vm boundary>')) break;
        const frame = FRAME.exec(text);
        if (!frame) continue;
        const entry = original(Number(frame[2]), Number(frame[3]));
        if (!entry) continue;
        first ??= entry;
        const at = `${entry.originalSource}:${entry.originalLine + 1}:${entry.originalColumn + 1}`;
        const name = ((entry as { name?: string }).name ?? frame[1] ?? '').replace(/^Object\./, '');
        frames.push(name ? `at ${name} (${at})` : `at ${at}`);
        if (frames.length === MAX_FRAMES) break;
      }
      if (!first) return {};
      const location = { file: first.originalSource, line: first.originalLine + 1, column: first.originalColumn + 1 };
      const source = contents[payload.sources.indexOf(first.originalSource)];
      const codeFrame = source ? codeFrameOf(source, location.line, location.column) : undefined;
      return { location, frames, ...(codeFrame ? { codeFrame } : {}) };
    },
  };
}

/**
 * Three lines of `source` around `line`, numbered, the failing one marked with `>` and a caret
 * under `column` (1-based): the shape of babel's and TypeScript's code frames.
 */
export function codeFrameOf(source: string, line: number, column: number): string | undefined {
  const lines = source.split(/\r?\n/);
  if (line < 1 || line > lines.length) return undefined;
  const from = Math.max(1, line - 1);
  const to = Math.min(lines.length, line + 1);
  const width = String(to).length;
  // A long line (minified code) is shown from a little before the column.
  const start = (lines[line - 1] as string).length > MAX_LINE_CHARS ? Math.max(0, column - 1 - 40) : 0;
  const cut = (text: string) => {
    const shown = text.slice(start, start + MAX_LINE_CHARS);
    return `${start > 0 ? '…' : ''}${shown}${text.length > start + MAX_LINE_CHARS ? '…' : ''}`;
  };
  const out: string[] = [];
  for (let n = from; n <= to; n++) {
    const text = lines[n - 1] as string;
    out.push(`${n === line ? '>' : ' '} ${String(n).padStart(width)} | ${cut(text)}`.trimEnd());
    if (n === line) {
      // Tabs stay tabs, so that the caret lines up under a tab-indented line.
      const before = (start > 0 ? ' ' : '') + text.slice(start, Math.max(start, column - 1)).replace(/[^\t]/g, ' ');
      out.push(`  ${' '.repeat(width)} | ${before}^`);
    }
  }
  return out.join('\n');
}
