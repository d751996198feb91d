import { dirname, resolve } from 'node:path';
import { isInside } from './resolve.js';

/** A computed `require()`/`import()` whose pattern leads out of the folder, placed in its file. */
export interface ComputedImport {
  /** The literal start of the path (`../`), as esbuild folds it. */
  readonly prefix: string;
  /** 1-based line, 0-based column of the call's argument. */
  readonly line: number;
  readonly column: number;
}

const CALL = /\b(?:require|import)\s*\(/g;
const SPACE_OR_COMMENT = /^(?:\s+|\/\*[\s\S]*?\*\/|\/\/[^\n]*\n|\()*/;
const LITERAL = /^(?:'((?:[^'\\\n]|\\.)*)'|"((?:[^"\\\n]|\\.)*)"|`((?:[^`\\$]|\\.|\$(?!\{))*)(`|\$\{))/;
const PLUS = /^(?:\s+|\/\*[\s\S]*?\*\/|\/\/[^\n]*\n)*\+(?:\s+|\/\*[\s\S]*?\*\/|\/\/[^\n]*\n|\()*/;

/**
 * The literal start of the call's argument at `text`, and whether more follows it (a `+` of
 * something that is not a literal, or a template's `${`): esbuild bundles such a call as every
 * file its pattern matches, walking the folders of that start, read without the resolver.
 */
function literalStart(text: string): { prefix: string; computed: boolean } {
  let rest = text.slice((SPACE_OR_COMMENT.exec(text)?.[0] ?? '').length);
  let prefix = '';
  for (;;) {
    const literal = LITERAL.exec(rest);
    if (!literal) return { prefix, computed: prefix !== '' };
    prefix += literal[1] ?? literal[2] ?? literal[3] ?? '';
    if (literal[4] === '${') return { prefix, computed: true };
    rest = rest.slice(literal[0].length);
    const plus = PLUS.exec(rest);
    if (!plus) return { prefix, computed: false };
    rest = rest.slice(plus[0].length);
  }
}

function placeOf(text: string, index: number): { line: number; column: number } {
  const before = text.slice(0, index);
  const line = before.split('\n').length;
  return { line, column: index - (before.lastIndexOf('\n') + 1) };
}

/**
 * The calls of `text` (the source of `file`) whose computed path starts outside `realDir`
 * (docs/transforms.md#what-a-transform-may-import). A pattern inside the folder stays allowed:
 * it bundles the folder's own files. The loader refuses any file outside the folder as well;
 * this finds the call first, with its place, before esbuild walks the folders it names.
 */
export function computedImportsOutside(text: string, file: string, realDir: string): ComputedImport[] {
  const found: ComputedImport[] = [];
  for (const call of text.matchAll(CALL)) {
    const at = (call.index ?? 0) + call[0].length;
    const { prefix, computed } = literalStart(text.slice(at, at + 4096));
    if (!computed || !prefix.includes('/')) continue;
    const folder = resolve(dirname(file), prefix.slice(0, prefix.lastIndexOf('/') + 1));
    if (!isInside(realDir, folder)) found.push({ prefix, ...placeOf(text, at) });
  }
  return found;
}
