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
    const part = current.replace(/\n+$/, '');
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
  const parts: string[] = [];
  let body: string[] = [];
  for (const line of block.lines) {
    const pieces = measure(line) <= room ? [line] : cutAt(line, Math.max(room, 1), measure);
    for (const piece of pieces) {
      if (body.length > 0 && measure(wrap([...body, piece])) > max) {
        parts.push(wrap(body));
        body = [];
      }
      body.push(piece);
    }
  }
  parts.push(wrap(body));
  return parts;
}

/** Cuts `text` into pieces within `max`, at the last space that fits where there is one. */
function cutAt(text: string, max: number, measure: Measure): string[] {
  const pieces: string[] = [];
  let rest = text;
  while (measure(rest) > max) {
    const fits = longestFitting(rest, max, measure);
    const space = rest.lastIndexOf(' ', fits);
    const cut = safeCut(rest, space > fits / 2 ? space : fits);
    pieces.push(rest.slice(0, cut));
    rest = rest.slice(cut).replace(/^ /, '');
  }
  pieces.push(rest);
  return pieces;
}

/** The most characters of `text` whose measure is within `max` (at least 1). */
function longestFitting(text: string, max: number, measure: Measure): number {
  let lo = 1;
  let hi = text.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (measure(text.slice(0, mid)) <= max) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** `cut`, moved back one when it would split a surrogate pair. */
function safeCut(text: string, cut: number): number {
  const code = text.charCodeAt(cut - 1);
  return code >= 0xd800 && code <= 0xdbff && cut > 1 ? cut - 1 : Math.max(cut, 1);
}

/** The spans open at position `p` of `s`, outermost first. */
function openAt(s: string, p: number): Span[] {
  return openWithin(spansOf(s), p, 0, s.length);
}

/** The spans open at `p` among those between `from` and `to`, outermost first. */
function openWithin(spanAt: SpanFinder, p: number, from: number, to: number): Span[] {
  for (let i = from; i < to; ) {
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

/** The spans of `s` at its top level, in order. */
function topLevel(s: string): Span[] {
  const spanAt = spansOf(s);
  const spans: Span[] = [];
  for (let i = 0; i < s.length; ) {
    const span = spanAt(i);
    if (span) spans.push(span);
    i = span ? span.end : i + 1;
  }
  return spans;
}

/**
 * Splits one line too long for a part: at the last space outside every span that fits, else at
 * the last space or character that fits with the spans open there closed, and reopened next.
 */
function splitLine(line: string, max: number, measure: Measure): string[] {
  const pieces: string[] = [];
  let rest = line;
  while (measure(rest) > max) {
    const fits = longestFitting(rest, max, measure);
    const spans = topLevel(rest);
    const outside = (p: number) => !spans.some((span) => p > span.innerStart - span.open.length && p < span.end);
    let cut = -1;
    for (let s = rest.lastIndexOf(' ', fits); s > fits / 4 && cut === -1; s = rest.lastIndexOf(' ', s - 1))
      if (outside(s)) cut = s;
    if (cut === -1) cut = forcedCut(rest, fits, max, measure);
    const open = openAt(rest, cut);
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
function forcedCut(rest: string, fits: number, max: number, measure: Measure): number {
  let cut = safeCut(rest, fits);
  for (let tries = 0; tries < 8 && cut > 1; tries++) {
    const closers = openAt(rest, cut)
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
