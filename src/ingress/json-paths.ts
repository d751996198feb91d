/**
 * Whether a JSON text holds a value at one of `paths` anywhere in it, duplicate keys included:
 * `{"card":{"number":"4111"},"card":1}` holds `card.number`, though its parsed value (the last
 * `card` wins) does not. The request log asks before keeping a body raw, so that no value a
 * `hooks.log.redact` path names is kept in text the parser never showed (docs/runtime.md#request-log-and-replay).
 * `raw` is JSON that `JSON.parse` took; `*` in a path stands for any key or index.
 */
export function holdsAnyPath(raw: Buffer, paths: readonly (readonly string[])[]): boolean {
  return createPathFinder(paths)(raw);
}

/** `holdsAnyPath` for `paths`, with what it searches the bytes for made once. */
export function createPathFinder(paths: readonly (readonly string[])[]): (raw: Buffer) => boolean {
  const needles = paths.map((path) => ({
    path,
    keys: path
      .filter((segment) => segment !== '*' && !/^\d+$/.test(segment))
      .map((key) => Buffer.from(JSON.stringify(key))),
  }));
  return (raw) => {
    const candidates = needles.filter(({ keys }) => mayHold(raw, keys)).map(({ path }) => path);
    if (candidates.length === 0) return false;
    try {
      return scanFor(raw, candidates);
    } catch {
      // A text it cannot read (a key JSON.parse would not take): as if it held one, so that it is
      // kept re-serialized, never raw.
      return true;
    }
  };
}

/** Whether `raw` holds a value at one of `candidates`, read token by token. */
function scanFor(raw: Buffer, candidates: readonly (readonly string[])[]): boolean {
  const scan = createScan(raw.toString('utf8'));
  const path: string[] = [];
  /** Whether the path so far leads to a candidate (`whole`: is one). */
  const leads = (whole: boolean) =>
    candidates.some(
      (p) =>
        (whole ? p.length === path.length : p.length > path.length) &&
        path.every((key, i) => p[i] === '*' || p[i] === key),
    );
  /** Reads the value at the cursor; true once a value at a candidate path has been found. */
  const value = (): boolean => {
    if (leads(true)) return true;
    if (!leads(false)) return scan.skipValue() && false;
    const c = scan.peek();
    if (c === '{') return members();
    if (c === '[') return elements();
    scan.skipScalar();
    return false;
  };
  const members = (): boolean => {
    scan.expect('{');
    if (scan.peek() === '}') return scan.expect('}') && false;
    do {
      path.push(scan.key());
      scan.expect(':');
      if (value()) return true;
      path.pop();
    } while (scan.next(','));
    scan.expect('}');
    return false;
  };
  const elements = (): boolean => {
    scan.expect('[');
    if (scan.peek() === ']') return scan.expect(']') && false;
    let index = 0;
    do {
      path.push(String(index++));
      if (value()) return true;
      path.pop();
    } while (scan.next(','));
    scan.expect(']');
    return false;
  };
  return value();
}

const ESCAPES = [Buffer.from('\\u'), Buffer.from('\\/')];

/**
 * Whether a JSON text may hold a path at all: each of its keys spelled out, in quotes (searched
 * in the bytes, before any text is made). A text with a `\u` or `\/` escape may spell a key
 * otherwise: it may.
 */
function mayHold(raw: Buffer, keys: readonly Buffer[]): boolean {
  return keys.every((key) => raw.includes(key)) || ESCAPES.some((sequence) => raw.includes(sequence));
}

/** JSON's white space, and a byte order mark. */
const isSpace = (code: number) => code === 32 || code === 10 || code === 13 || code === 9 || code === 0xfeff;

/** A cursor over a JSON text known to be valid: white space skipped before every token. */
function createScan(text: string) {
  let i = 0;
  const skipSpace = () => {
    while (i < text.length && isSpace(text.charCodeAt(i))) i++;
  };
  /** The end of the string starting at `i` (its closing quote's index + 1). */
  const stringEnd = (): number => {
    let j = i + 1;
    while (j < text.length && text.charCodeAt(j) !== 34) j += text.charCodeAt(j) === 92 ? 2 : 1;
    return j + 1;
  };
  return {
    peek(): string {
      skipSpace();
      return text.charAt(i);
    },
    /** Moves past `c`, the next token (the text is valid JSON); true. */
    expect(c: string): true {
      skipSpace();
      if (text.charAt(i) === c) i++;
      return true;
    },
    /** Moves past `c` when it is the next token. */
    next(c: string): boolean {
      skipSpace();
      if (text.charAt(i) !== c) return false;
      i++;
      return true;
    },
    /** An object's key, its escapes read. */
    key(): string {
      skipSpace();
      const end = stringEnd();
      const raw = text.slice(i, end);
      i = end;
      return raw.includes('\\') ? (JSON.parse(raw) as string) : raw.slice(1, -1);
    },
    /** Moves past a string, a number, `true`, `false` or `null`. */
    skipScalar(): void {
      skipSpace();
      if (text.charCodeAt(i) === 34) {
        i = stringEnd();
        return;
      }
      for (let c = text.charCodeAt(i); i < text.length && !isSpace(c) && c !== 44 && c !== 93 && c !== 125; ) {
        c = text.charCodeAt(++i);
      }
    },
    /** Moves past a whole value, nested ones included (its strings skipped whole); true. */
    skipValue(): true {
      skipSpace();
      let depth = 0;
      do {
        const c = text.charCodeAt(i);
        if (c === 34) i = stringEnd();
        else if (c === 123 || c === 91) {
          depth++;
          i++;
        } else if (c === 125 || c === 93) {
          depth--;
          i++;
        } else if (depth === 0) {
          this.skipScalar();
          return true;
        } else i++;
      } while (depth > 0 && i < text.length);
      return true;
    },
  };
}
