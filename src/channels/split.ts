import { fenceOf } from './markdown.js';
import { type Span, type SpanFinder, spansOf } from './spans.js';

/** Splits `text` into pieces of at most `max` characters, preferring line, then word boundaries. */
export function splitMessage(text: string, max: number): string[] {
  return splitMarkdown(text, max);
}

/**
 * The most characters of a reply a chat service is sent (8 messages of 4,000): the rest is cut
 * with a note, so a runaway reply is neither a flood of messages nor seconds of splitting on
 * the event loop. The whole reply stays in the run's record.
 */
export const MAX_SPLIT_CHARS = 32_000;

/** `text`, cut at MAX_SPLIT_CHARS with a note of what was left out. */
export function withinSplitBound(text: string): string {
  if (text.length <= MAX_SPLIT_CHARS) return text;
  const cut = text.slice(0, safeCut(text, MAX_SPLIT_CHARS - 200));
  return `${cut}\n\n[… ${text.length - cut.length} more characters cut by hookd: the whole reply is in the run's record]`;
}

/** How long a part is for its service (its formatted length, by default its characters). */
export type Measure = (part: string) => number;

const chars: Measure = (part) => part.length;

/**
 * Splits a Markdown reply into parts of at most `max` as `measure` counts them
 * (docs/channels.md#formatting): between lines where it can, else between words; never inside a
 * code block (a block too long alone is closed at the end of a part and opened again in the
 * next) nor inside a code span, link or formatting pair (closed and reopened when one is too long
 * alone).
 */
export function splitMarkdown(whole: string, max: number, measure: Measure = chars): string[] {
  const text = withinSplitBound(whole);
  if (measure(text) <= max) return [text];
  return partsOf(text, max, measure, measure === chars);
}

/**
 * The parts of `text`. Unless `exact`, a part's measure is summed from its lines' (measuring
 * the part whole for each line added cost seconds for a reply of many short lines); a part the
 * sum misjudged (a formatting pair across lines renders differently) is measured whole at the
 * end and split again exactly.
 */
function partsOf(text: string, max: number, measure: Measure, exact: boolean): string[] {
  const parts: string[] = [];
  let current = '';
  let size = 0;
  const flush = () => {
    const part = withoutTrailingNewlines(current);
    current = '';
    size = 0;
    if (part.trim() === '') return;
    if (!exact && measure(part) > max) parts.push(...partsOf(part, max, measure, true));
    else parts.push(part);
  };
  const sizeWith = (piece: string) => {
    if (current === '') return measure(piece);
    return exact ? measure(`${current}\n${piece}`) : size + 1 + measure(piece);
  };
  const add = (piece: string) => {
    const joined = sizeWith(piece);
    if (joined <= max) {
      current = current === '' ? piece : `${current}\n${piece}`;
      size = joined;
      return;
    }
    flush();
    const alone = measure(piece);
    if (alone <= max) {
      current = piece;
      size = alone;
      return;
    }
    const pieces = splitLine(piece, max, measure);
    parts.push(...pieces.slice(0, -1));
    current = pieces.at(-1) ?? '';
    size = measure(current);
  };
  for (const block of blocksOf(text)) {
    if (typeof block === 'string') add(block);
    else if (sizeWith(block.text) <= max || measure(block.text) <= max) add(block.text);
    else {
      flush();
      const pieces = splitCode(block, max, measure);
      parts.push(...pieces.slice(0, -1));
      current = pieces.at(-1) ?? '';
      size = measure(current);
    }
  }
  flush();
  return parts.length === 0 ? [text.slice(0, max)] : parts;
}

interface CodeBlock {
  readonly open: string;
  readonly close: string;
  readonly lines: readonly string[];
  readonly text: string;
}

/** The reply's lines, a fenced code block as one block. */
function blocksOf(text: string): (string | CodeBlock)[] {
  const lines = text.split('\n');
  const blocks: (string | CodeBlock)[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    const marker = fenceOf(line)?.marker;
    if (marker === undefined) {
      blocks.push(line);
      continue;
    }
    let j = i + 1;
    while (j < lines.length && !(lines[j] as string).trim().startsWith(marker)) j++;
    const body = lines.slice(i + 1, j);
    const close = j < lines.length ? (lines[j] as string) : marker;
    blocks.push({ open: line, close, lines: body, text: [line, ...body, close].join('\n') });
    i = j;
  }
  return blocks;
}

/** A code block too long for one part, as parts that each open and close its fence. */
function splitCode(block: CodeBlock, max: number, measure: Measure): string[] {
  const wrap = (body: readonly string[]) => [block.open, ...body, block.close].join('\n');
  const room = max - measure(wrap(['']));
  const lines = block.lines.flatMap((line) =>
    measure(line) <= room ? [line] : cutAt(line, Math.max(room, 1), measure),
  );
  const parts: string[] = [];
  for (let from = 0; from < lines.length || parts.length === 0; ) {
    const count =
      from === lines.length
        ? 0
        : largestFitting(lines.length - from, 2, (n) => measure(wrap(lines.slice(from, from + n))) <= max);
    parts.push(wrap(lines.slice(from, from + count)));
    from += count;
  }
  return parts;
}

/** Cuts `text` into pieces within `max`, at the last space that fits where there is one. */
function cutAt(text: string, max: number, measure: Measure): string[] {
  const pieces: string[] = [];
  let rest = text;
  for (let fits = longestFitting(rest, max, measure); fits < rest.length; fits = longestFitting(rest, max, measure)) {
    const space = rest.lastIndexOf(' ', fits);
    const cut = safeCut(rest, space > fits / 2 ? space : fits);
    pieces.push(rest.slice(0, cut));
    rest = rest.slice(cut).replace(/^ /, '');
  }
  pieces.push(rest);
  return pieces;
}

/** The most characters of `text` whose measure is within `max` (at least 1; all of them when it fits whole). */
function longestFitting(text: string, max: number, measure: Measure): number {
  return largestFitting(text.length, max, (n) => measure(text.slice(0, n)) <= max);
}

/**
 * The largest n from 1 to `total` that `fits` (1 when none does), `fits` holding up to some n and
 * not after: probed at `first`, twice that, four times… then bisected, so that finding n measures
 * about n items a few times over, not all `total` of them (bisecting the whole rest of a long
 * line for each part cost a part's measure per character of the line).
 */
function largestFitting(total: number, first: number, fits: (n: number) => boolean): number {
  let lo = 1;
  let hi = total;
  for (let probe = Math.min(Math.max(first, 1), total); ; probe = Math.min(probe * 2, total)) {
    if (!fits(probe)) {
      hi = probe - 1;
      break;
    }
    lo = probe;
    if (probe === total) return total;
  }
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fits(mid)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** `text` without the newlines it ends with (a pattern for it backtracked over a run of them). */
function withoutTrailingNewlines(text: string): string {
  let end = text.length;
  while (end > 0 && text[end - 1] === '\n') end--;
  return text.slice(0, end);
}

/** `cut`, moved back one when it would split a surrogate pair. */
function safeCut(text: string, cut: number): number {
  const code = text.charCodeAt(cut - 1);
  return code >= 0xd800 && code <= 0xdbff && cut > 1 ? cut - 1 : Math.max(cut, 1);
}

/** The spans open at `p` among those between `from` and `to`, outermost first. */
function openWithin(spanAt: SpanFinder, p: number, from: number, to: number): Span[] {
  // A span that opens at or after `p` does not hold it: the search ends there.
  for (let i = from; i < Math.min(to, p); ) {
    const span = spanAt(i);
    if (!span || span.end > to) {
      i++;
      continue;
    }
    if (p > i && p < span.end) {
      if (span.t === 'code' || p <= span.innerStart || p >= span.innerEnd) return [span];
      return [span, ...openWithin(spanAt, p, span.innerStart, span.innerEnd)];
    }
    i = span.end;
  }
  return [];
}

/** The spans at the top level of a line that open before `upTo`, in order. */
function topLevel(spanAt: SpanFinder, upTo: number): Span[] {
  const spans: Span[] = [];
  for (let i = 0; i < upTo; ) {
    const span = spanAt(i);
    if (span) spans.push(span);
    i = span ? span.end : i + 1;
  }
  return spans;
}

/** The last space of `line` after `fits / 4` and up to `fits` that no span of `spans` holds, or -1. */
function spaceOutside(line: string, fits: number, spans: readonly Span[]): number {
  // The spans are in order and apart: the last one opened before a space is the only one that can hold it.
  let last = spans.length - 1;
  for (let s = line.lastIndexOf(' ', fits); s > fits / 4; s = line.lastIndexOf(' ', s - 1)) {
    while (last >= 0 && (spans[last] as Span).innerStart - (spans[last] as Span).open.length >= s) last--;
    if (last < 0 || (spans[last] as Span).end <= s) return s;
  }
  return -1;
}

/**
 * Splits one line too long for a part: at the last space outside every span that fits, else at
 * the last space or character that fits with the spans open there closed, and reopened next.
 */
function splitLine(line: string, max: number, measure: Measure): string[] {
  const pieces: string[] = [];
  let rest = line;
  for (let fits = longestFitting(rest, max, measure); fits < rest.length; fits = longestFitting(rest, max, measure)) {
    const spanAt = spansOf(rest);
    let cut = spaceOutside(rest, fits, topLevel(spanAt, fits));
    if (cut === -1) cut = forcedCut(rest, spanAt, fits, max, measure);
    const open = openWithin(spanAt, cut, 0, rest.length);
    const closers = open
      .map((span) => span.close)
      .reverse()
      .join('');
    pieces.push(`${rest.slice(0, cut).replace(/ $/, '')}${closers}`);
    rest = `${open.map((span) => span.open).join('')}${rest.slice(cut).replace(/^ /, '')}`;
  }
  pieces.push(rest);
  return pieces;
}

/** A cut that fits with the closers of the spans open there: at a space when one is late enough. */
function forcedCut(rest: string, spanAt: SpanFinder, fits: number, max: number, measure: Measure): number {
  let cut = safeCut(rest, fits);
  for (let tries = 0; tries < 8 && cut > 1; tries++) {
    const closers = openWithin(spanAt, cut, 0, rest.length)
      .map((span) => span.close)
      .join('');
    const over = measure(rest.slice(0, cut) + closers) - max;
    if (over <= 0) {
      const space = rest.lastIndexOf(' ', cut);
      return space > cut / 2 ? space : cut;
    }
    cut = safeCut(rest, cut - over);
  }
  return cut;
}
