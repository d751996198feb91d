import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { keyPositions, locate, MAX_CONFIG_BYTES, type Position, stringCharPosition } from '../config/index.js';
import { readRegularFile } from '../read-file.js';
import type { CliIo } from './io.js';

/**
 * A configuration's problems as `file:line:column: error: path: message`, the shape editors and
 * terminals link: `hookd check` prints every finding so, and every other command prints the
 * problems that stop it the same way (docs/cli.md#hookd-check).
 */

/** One problem found, located in the config file (or a transform's file) where it can be. */
export interface Finding {
  readonly severity: 'error' | 'warning';
  /** The config key path (`hooks.mappings[0].messageTemplate`); empty for the file as a whole. */
  readonly path: string;
  readonly message: string;
  readonly file?: string;
  readonly line?: number;
  readonly column?: number;
}

/**
 * `path: message` of a problem (`hooks.mappings[0].id: …`, `hooks.presets[0] (mail): …`,
 * `agents.defaults.models["a/b"]: …`). A name is taken whole (`(?![\w$-])`): a name split anywhere
 * made a long word without `: ` take exponential time to refuse.
 */
export const PATHED =
  /^((?:[A-Za-z_$][\w$-]*(?![\w$-])|\[(?:\d+|"(?:[^"\\]|\\.)*")\]|\.| \([^)]*\))+|\(root\)): ([\s\S]*)$/;
const AT_LINE = /^(\d+):(\d+): ([\s\S]*)$/;
const IN_FILE = /^(\/[^:\n]+):(\d+):(\d+): ([\s\S]*)$/;
/** A template's syntax error, and the offset in the template it names (`… at 13`). */
const TEMPLATE_AT = /^template error\b[^:]*: .*? at (\d+)\b/;

/** Places problems in `file`, whose text is `text` (none placed without it). */
export function createLocator(file: string | undefined, text: string | undefined) {
  const positions = text === undefined ? new Map<string, Position>() : keyPositions(text);
  /** Where a problem of the config's key `path` is: a template's faulty character, else the key. */
  const placeOf = (path: string, message: string): Position | undefined => {
    const template = TEMPLATE_AT.exec(message);
    const inTemplate = template && text !== undefined && stringCharPosition(text, path, Number(template[1]));
    return inTemplate || locate(positions, path);
  };
  return {
    /** A `path: message` problem line as a finding, placed at its key (or in the file it names). */
    findingOf(problem: string, severity: Finding['severity']): Finding {
      const inFile = (path: string, message: string, at?: Position) => ({
        severity,
        path,
        message,
        ...(file === undefined ? {} : { file }),
        ...(at ?? {}),
      });
      const syntax = AT_LINE.exec(problem);
      if (syntax) return inFile('', syntax[3] as string, { line: Number(syntax[1]), column: Number(syntax[2]) });
      const pathed = PATHED.exec(problem);
      if (!pathed) return inFile('', problem);
      // A preset's name in parentheses stays in the path shown, not in the one located.
      const path = (pathed[1] as string).replace(/^\(root\)$/, '');
      const located = path.replace(/ \([^)]*\)/g, '');
      const message = pathed[2] as string;
      const elsewhere = IN_FILE.exec(message);
      if (!elsewhere) return inFile(path, message, placeOf(located, message));
      const [, other, line, column, said] = elsewhere;
      return {
        severity,
        path,
        message: said as string,
        file: other as string,
        line: Number(line),
        column: Number(column),
      };
    },
  };
}

/** `file:line:col: error: path: message`. */
export function formatFinding(f: Finding, cwd: string): string {
  const where =
    f.file === undefined ? '' : `${relativeOrAbsolute(f.file, cwd)}${f.line ? `:${f.line}:${f.column}` : ''}: `;
  return `${where}${f.severity}: ${f.path ? `${f.path}: ` : ''}${f.message}`;
}

/** The config file's findings first, by line and column, then other files' (transforms), then unplaced ones. */
export function byPlace(configFile: string | undefined): (a: Finding, b: Finding) => number {
  const rank = (f: Finding) => (f.line === undefined ? 2 : f.file === configFile ? 0 : 1);
  return (a, b) =>
    rank(a) - rank(b) ||
    (a.file ?? '').localeCompare(b.file ?? '') ||
    (a.line ?? 0) - (b.line ?? 0) ||
    (a.column ?? 0) - (b.column ?? 0);
}

function relativeOrAbsolute(file: string, cwd: string): string {
  return file.startsWith(`${resolve(cwd)}/`) ? file.slice(resolve(cwd).length + 1) : file;
}

/**
 * The text of the file the problems are in, to place them, read as the config is (a regular
 * file, bounded): a FIFO or a device named by a problem must not hang the report of it.
 */
function textOf(file: string): string | undefined {
  try {
    const read = readRegularFile(realpathSync(file), MAX_CONFIG_BYTES);
    return 'text' in read ? read.text : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Prints the problems of an invalid configuration as `check` does, each at its place in the
 * file (`hookd.json5:9:31: error: hooks.mappings[0].messageTemplate: template error …`).
 */
export function printConfigProblems(problems: readonly string[], file: string | undefined, io: CliIo): void {
  const text = file === undefined ? undefined : textOf(file);
  const { findingOf } = createLocator(file, text);
  const findings = problems.map((p) => findingOf(p, 'error')).sort(byPlace(file));
  for (const f of findings) io.err(formatFinding(f, io.cwd));
  io.err(`hookd: ${findings.length} problem(s) in the configuration${file ? ` (${file})` : ''}`);
}
