import JSON5 from 'json5';
import { joinPath } from './env.js';

/** A place in a config file: 1-based line and column. */
export interface Position {
  readonly line: number;
  readonly column: number;
}

/**
 * Where each key of a JSON5 text stands, by its config path (`hooks.mappings[0].id`): an
 * object member at its key, an array item at its first character. Made for text JSON5 has
 * already parsed; on anything else it returns what it found before the first surprise.
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
  let at = 0;

  function skipBlank(): void {
    for (;;) {
      const c = text[at];
      if (c === undefined) return;
      if (/\s|\uFEFF/.test(c)) at++;
      else if (c === '/' && text[at + 1] === '/') {
        const end = text.indexOf('\n', at);
        at = end === -1 ? text.length : end + 1;
      } else if (c === '/' && text[at + 1] === '*') {
        const end = text.indexOf('*/', at + 2);
        at = end === -1 ? text.length : end + 2;
      } else return;
    }
  }

  /** Skips a quoted string starting at `at`; returns its source text. */
  function string(): string {
    const quote = text[at];
    const start = at++;
    while (at < text.length && text[at] !== quote) at += text[at] === '\\' ? 2 : 1;
    at++;
    return text.slice(start, at);
  }

  function value(path: string): void {
    skipBlank();
    const c = text[at];
    if (c === '{') object(path);
    else if (c === '[') array(path);
    else if (c === '"' || c === "'") string();
    else while (at < text.length && !/[\s,}\]/]/.test(text[at] as string)) at++;
  }

  function object(path: string): void {
    at++;
    for (;;) {
      skipBlank();
      const c = text[at];
      if (c === undefined) return;
      if (c === '}') {
        at++;
        return;
      }
      if (c === ',') {
        at++;
        continue;
      }
      const keyAt = at;
      let key: string;
      if (c === '"' || c === "'") key = JSON5.parse(string()) as string;
      else {
        while (at < text.length && !/[\s:/]/.test(text[at] as string)) at++;
        key = text.slice(keyAt, at);
      }
      const keyPath = joinPath(path, key);
      found.set(keyPath, positionOf(keyAt));
      skipBlank();
      if (text[at] !== ':') return;
      at++;
      value(keyPath);
    }
  }

  function array(path: string): void {
    at++;
    for (let index = 0; ; ) {
      skipBlank();
      const c = text[at];
      if (c === undefined) return;
      if (c === ']') {
        at++;
        return;
      }
      if (c === ',') {
        at++;
        continue;
      }
      const itemPath = `${path}[${index++}]`;
      found.set(itemPath, positionOf(at));
      const before = at;
      value(itemPath);
      if (at === before) return;
    }
  }

  try {
    value('');
  } catch {
    // A key JSON5 could not read: what was found so far stands.
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
