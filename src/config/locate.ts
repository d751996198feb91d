import { joinPath } from './env.js';
import { type Node, parseSpans } from './spans.js';

/** A place in a config file: 1-based line and column. */
export interface Position {
  readonly line: number;
  readonly column: number;
}

/**
 * Where each key of a JSON5 text stands, by its config path (`hooks.mappings[0].id`): an
 * object member at its key, an array item at its first character. Made for text JSON5 has
 * already parsed; on anything else it returns nothing.
 */
export function keyPositions(text: string): ReadonlyMap<string, Position> {
  const found = new Map<string, Position>();
  const lineStarts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === '\n') lineStarts.push(i + 1);
  const positionOf = (offset: number): Position => {
    let low = 0;
    let high = lineStarts.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if ((lineStarts[mid] as number) <= offset) low = mid;
      else high = mid - 1;
    }
    return { line: low + 1, column: offset - (lineStarts[low] as number) + 1 };
  };
  const walk = (node: Node, path: string): void => {
    if (node.type === 'object') {
      for (const prop of node.props) {
        const key = joinPath(path, prop.key);
        found.set(key, positionOf(prop.keyStart));
        walk(prop.value, key);
      }
    } else if (node.type === 'array') {
      node.items.forEach((item, i) => {
        found.set(`${path}[${i}]`, positionOf(item.start));
        walk(item, `${path}[${i}]`);
      });
    }
  };
  try {
    walk(parseSpans(text), '');
  } catch {
    // Not readable as JSON5: nothing is located.
  }
  return found;
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
