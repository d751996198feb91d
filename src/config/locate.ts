import { joinPath } from './env.js';
import { type Node, parseSpans } from './spans.js';

/** A place in a config file: 1-based line and column. */
export interface Position {
  readonly line: number;
  readonly column: number;
}

/** Turns offsets of `text` into positions. */
function positionsIn(text: string): (offset: number) => Position {
  const lineStarts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === '\n') lineStarts.push(i + 1);
  return (offset) => {
    let low = 0;
    let high = lineStarts.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if ((lineStarts[mid] as number) <= offset) low = mid;
      else high = mid - 1;
    }
    return { line: low + 1, column: offset - (lineStarts[low] as number) + 1 };
  };
}

/**
 * The longest config path located. A file written by someone else (a plugin's manifest) could
 * hold a 20,000-character key over thousands of values: each value's path repeats it, and a map
 * of such paths took seconds (strings that long hash alike). A value deeper than this is placed
 * at its nearest parent.
 */
const MAX_PATH_CHARS = 1024;

/** Calls `visit` with every value of a JSON5 text, its config path, and where its key (or it, in an array) starts. */
function walkValues(text: string, visit: (path: string, node: Node, keyStart: number) => void): void {
  const walk = (node: Node, path: string): void => {
    if (path.length > MAX_PATH_CHARS) return;
    if (node.type === 'object') {
      for (const prop of node.props) {
        const key = joinPath(path, prop.key);
        if (key.length > MAX_PATH_CHARS) continue;
        visit(key, prop.value, prop.keyStart);
        walk(prop.value, key);
      }
    } else if (node.type === 'array') {
      node.items.forEach((item, i) => {
        visit(`${path}[${i}]`, item, item.start);
        walk(item, `${path}[${i}]`);
      });
    }
  };
  try {
    walk(parseSpans(text), '');
  } catch {
    // Not readable as JSON5: nothing is visited.
  }
}

/**
 * Where each key of a JSON5 text stands, by its config path (`hooks.mappings[0].id`): an
 * object member at its key, an array item at its first character. Made for text JSON5 has
 * already parsed; on anything else it returns nothing.
 */
export function keyPositions(text: string): ReadonlyMap<string, Position> {
  const found = new Map<string, Position>();
  const positionOf = positionsIn(text);
  walkValues(text, (path, _node, keyStart) => found.set(path, positionOf(keyStart)));
  return found;
}

/** How many characters of a quoted JSON5 string's source the escape at `at` takes, and how many it stands for. */
function escapeAt(raw: string, at: number): { source: number; stands: number } {
  if (raw[at] !== '\\') return { source: 1, stands: 1 };
  const next = raw[at + 1];
  if (next === 'u') return { source: 6, stands: 1 };
  if (next === 'x') return { source: 4, stands: 1 };
  // A line continuation stands for nothing.
  if (next === '\r') return { source: raw[at + 2] === '\n' ? 3 : 2, stands: 0 };
  if (next === '\n' || next === '\u2028' || next === '\u2029') return { source: 2, stands: 0 };
  return { source: 2, stands: 1 };
}

/**
 * Where the `offset`-th character (0-based) of the string at `path` stands in a JSON5 text,
 * escapes counted as written: a template's syntax error in its config file. Undefined when
 * `path` holds no quoted string there.
 */
export function stringCharPosition(text: string, path: string, offset: number): Position | undefined {
  let found: { start: number; raw: string } | undefined;
  walkValues(text, (at, node) => {
    if (at === path && node.type === 'value' && /^['"]/.test(node.raw)) found = node;
  });
  if (!found) return undefined;
  let source = 1;
  let stood = 0;
  while (source < found.raw.length - 1) {
    const step = escapeAt(found.raw, source);
    if (stood + step.stands > offset) break;
    stood += step.stands;
    source += step.source;
  }
  return positionsIn(text)(found.start + source);
}

/** The path without its last key or index (`a.b[0]` → `a.b`, `a` → ``). */
export function parentPath(path: string): string {
  const cut = path.match(/(\.[^.[\]]+|\[(?:\d+|"(?:[^"\\]|\\.)*")\])$/);
  if (cut) return path.slice(0, path.length - (cut[0] as string).length);
  return '';
}

/** Where `path` (or the nearest of its parents written in the file) stands in the file. */
export function locate(positions: ReadonlyMap<string, Position>, path: string): Position | undefined {
  for (let p = path; p !== ''; p = parentPath(p)) {
    const position = positions.get(p);
    if (position) return position;
  }
  return undefined;
}
