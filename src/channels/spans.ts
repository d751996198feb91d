/**
 * Where the inline spans of a line of Markdown open and close (docs/channels.md#formatting): code
 * spans, links, and bold, italic and strike pairs. The positions a span can close at are gathered
 * once for a text, and each look-up is a binary search among them: a reply is read in time
 * linear (times a logarithm) in its length, whatever it holds. Searching forward from each marker
 * for its closer took seconds for a line of `*x ` repeated, and held the event loop meanwhile.
 */

export type SpanKind = 'code' | 'link' | 'bold' | 'italic' | 'strike';

/** A span that opens at a position: its kind, where it ends, and its markers (to close and reopen it). */
export interface Span {
  readonly t: SpanKind;
  readonly end: number;
  readonly open: string;
  readonly close: string;
  /** Where its inner text starts and ends (the code, the text of a pair, a link's label). */
  readonly innerStart: number;
  readonly innerEnd: number;
}

/** The span that opens at a position of one text, if one does. */
export type SpanFinder = (i: number) => Span | undefined;

const PAIRS = [
  ['**', 'bold'],
  ['__', 'bold'],
  ['~~', 'strike'],
  ['*', 'italic'],
  ['_', 'italic'],
] as const;

/** Whether `c` is white space (or the edge of the text); printable ASCII is told apart at once. */
export const isSpace = (c: string | undefined) => c === undefined || c === ' ' || (!isPrintable(c) && /\s/.test(c));
const isWord = (c: string | undefined) =>
  c !== undefined && (isPrintable(c) ? /[A-Za-z0-9]/.test(c) : /[\p{L}\p{N}]/u.test(c));
const isPrintable = (c: string) => c > ' ' && c < '\x7f';

/** The index of the first of the sorted `positions` at or after `from` (their length when none is). */
function indexFrom(positions: readonly number[], from: number): number {
  let lo = 0;
  let hi = positions.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((positions[mid] as number) < from) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The first of the sorted `positions` at or after `from`, or -1. */
function firstFrom(positions: readonly number[], from: number): number {
  return positions[indexFrom(positions, from)] ?? -1;
}

/** Every position of `s` that `needle` starts at, overlapping ones too. */
function positionsOf(s: string, needle: string): number[] {
  const found: number[] = [];
  for (let j = s.indexOf(needle); j !== -1; j = s.indexOf(needle, j + 1)) found.push(j);
  return found;
}

/** Every position of `s` that holds white space. */
function spacesOf(s: string): number[] {
  const found: number[] = [];
  for (let j = 0; j < s.length; j++) if (isSpace(s[j])) found.push(j);
  return found;
}

/** Whether `marker` at `j` of `s` closes a pair: not after a space, nor (single) beside its twin. */
function closes(s: string, j: number, marker: string): boolean {
  if (!s.startsWith(marker, j) || isSpace(s[j - 1])) return false;
  if (marker.length === 1 && (s[j + 1] === marker || s[j - 1] === marker)) return false;
  return marker[0] !== '_' || !isWord(s[j + marker.length]);
}

/** Where a pair's marker closes one, in order (gathered for a marker the first time it opens one). */
type Closers = (marker: string) => readonly number[];

function pairAt(s: string, i: number, closers: Closers): Span | undefined {
  for (const [marker, t] of PAIRS) {
    if (!s.startsWith(marker, i) || isSpace(s[i + marker.length])) continue;
    if (marker[0] === '_' && isWord(s[i - 1])) continue;
    const end = firstFrom(closers(marker), i + marker.length + 1);
    if (end === -1) continue;
    return { t, end: end + marker.length, open: marker, close: marker, innerStart: i + marker.length, innerEnd: end };
  }
  return undefined;
}

/** The runs of backticks: where each starts and ends, and the starts of the runs of each length. */
interface Ticks {
  readonly starts: readonly number[];
  readonly ends: readonly number[];
  readonly byLength: ReadonlyMap<number, readonly number[]>;
}

function ticksOf(s: string): Ticks {
  const starts: number[] = [];
  const ends: number[] = [];
  const byLength = new Map<number, number[]>();
  for (let start = s.indexOf('`'); start !== -1; start = s.indexOf('`', ends.at(-1))) {
    let end = start;
    while (s[end] === '`') end++;
    starts.push(start);
    ends.push(end);
    const same = byLength.get(end - start);
    if (same) same.push(start);
    else byLength.set(end - start, [start]);
  }
  return { starts, ends, byLength };
}

/** A code span: the backticks from `i` to the end of their run, closed by a run of as many. */
function codeSpanAt(i: number, ticks: Ticks): Span | undefined {
  const n = (ticks.ends[indexFrom(ticks.starts, i + 1) - 1] as number) - i;
  const j = firstFrom(ticks.byLength.get(n) ?? [], i + n);
  if (j === -1) return undefined;
  const fence = '`'.repeat(n);
  return { t: 'code', end: j + n, open: fence, close: fence, innerStart: i + n, innerEnd: j };
}

/** Where a link's label may end (`](`), its URL end (`)`), and the characters neither may hold. */
interface LinkMarks {
  readonly labelEnds: readonly number[];
  readonly urlEnds: readonly number[];
  readonly newlines: readonly number[];
  readonly spaces: readonly number[];
}

const linkMarksOf = (s: string): LinkMarks => ({
  labelEnds: positionsOf(s, ']('),
  urlEnds: positionsOf(s, ')'),
  newlines: positionsOf(s, '\n'),
  spaces: spacesOf(s),
});

/** Whether one of the sorted `positions` lies in [from, to). */
const within = (positions: readonly number[], from: number, to: number) => {
  const first = firstFrom(positions, from);
  return first !== -1 && first < to;
};

/** A link: `[label](url)`, its label on one line, its URL not empty and without spaces. */
function linkAt(s: string, i: number, marks: LinkMarks): Span | undefined {
  const close = firstFrom(marks.labelEnds, i + 1);
  if (close === -1 || within(marks.newlines, i + 1, close)) return undefined;
  const end = firstFrom(marks.urlEnds, close + 2);
  if (end === -1 || end === close + 2 || within(marks.spaces, close + 2, end)) return undefined;
  return {
    t: 'link',
    end: end + 1,
    open: '[',
    close: `](${s.slice(close + 2, end)})`,
    innerStart: i + 1,
    innerEnd: close,
  };
}

/** The spans of `s`: what is gathered for a kind of span is gathered at its first look-up. */
export function spansOf(s: string): SpanFinder {
  const closing = new Map<string, readonly number[]>();
  const closers: Closers = (marker) => {
    const known = closing.get(marker);
    if (known) return known;
    const found = positionsOf(s, marker).filter((j) => closes(s, j, marker));
    closing.set(marker, found);
    return found;
  };
  let ticks: Ticks | undefined;
  let links: LinkMarks | undefined;
  return (i) => {
    const c = s[i];
    if (c === '`') {
      ticks ??= ticksOf(s);
      return codeSpanAt(i, ticks);
    }
    if (c === '[') {
      links ??= linkMarksOf(s);
      return linkAt(s, i, links);
    }
    return c === '*' || c === '_' || c === '~' ? pairAt(s, i, closers) : undefined;
  };
}
