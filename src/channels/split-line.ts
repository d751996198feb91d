/**
 * Cutting one line of a reply that is too long for a part (docs/channels.md#formatting): how much
 * of it fits, measured as the service counts it, and where to cut so that no code span, link or
 * formatting pair is broken (closed at the end of the part and reopened in the next).
 */

import { type Span, type SpanFinder, spansOf } from './spans.js';

/** How long a part is for its service (its formatted length, by default its characters). */
export type Measure = (part: string) => number;

/** Cuts `text` into pieces within `max`, at the last space that fits where there is one. */
export function cutAt(text: string, max: number, measure: Measure): string[] {
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
export function largestFitting(total: number, first: number, fits: (n: number) => boolean): number {
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

/** `cut`, moved back one when it would split a surrogate pair. */
export function safeCut(text: string, cut: number): number {
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

/** Splits one line too long for a part, closing at each cut the spans open there and reopening them after. */
export function splitLine(line: string, max: number, measure: Measure): string[] {
  const pieces: string[] = [];
  let rest = line;
  for (let fits = longestFitting(rest, max, measure); fits < rest.length; fits = longestFitting(rest, max, measure)) {
    const { cut, open } = cutOf(rest, fits, max, measure);
    pieces.push(pieceOf(rest, cut, open));
    rest = `${open.map((span) => span.open).join('')}${rest.slice(cut).replace(/^ /, '')}`;
  }
  pieces.push(rest);
  return pieces;
}

/** The part `rest` cut at `cut` makes, the spans `open` there closed. */
const pieceOf = (rest: string, cut: number, open: readonly Span[]) =>
  `${rest.slice(0, cut).replace(/ $/, '')}${open
    .map((span) => span.close)
    .reverse()
    .join('')}`;

/**
 * Where a line too long for a part is cut, and the spans open there: at the last space outside
 * every span that fits, else at the last space or character that fits with those spans closed,
 * measured as the part it makes (a closing marker can pair with a lone one before it: the part
 * went 4,001 of Slack's 4,000), else, when none fits so, at the last space or character that fits
 * with the spans cut through as text. They are cut through as text too when their markers take
 * more than a quarter of a part (a link to a long URL) or reopening them would leave the next
 * part less than a quarter of what fits: each part takes its share of the line (a link to a URL
 * longer than a part was closed and reopened with the same rest again, for ever).
 */
function cutOf(rest: string, fits: number, max: number, measure: Measure): { cut: number; open: readonly Span[] } {
  const spanAt = spansOf(rest);
  const outside = spaceOutside(rest, fits, topLevel(spanAt, fits));
  if (outside !== -1) return { cut: outside, open: [] };
  for (const cut of forcedCuts(rest, spanAt, fits, max, measure)) {
    const open = openWithin(spanAt, cut, 0, rest.length);
    const markers = open.map((span) => span.open + span.close).join('');
    const reopened = cut - open.reduce((sum, span) => sum + span.open.length, 0);
    if (measure(markers) <= max / 4 && reopened >= fits / 4 && measure(pieceOf(rest, cut, open)) <= max)
      return { cut, open };
  }
  const space = rest.lastIndexOf(' ', fits);
  const fitting = space > fits / 2 && measure(rest.slice(0, space)) <= max;
  return { cut: fitting ? space : safeCut(rest, fits), open: [] };
}

/**
 * Cuts that fit with the closers of the spans open there, best first: at a space when one is late
 * enough, then where it fits.
 */
function forcedCuts(rest: string, spanAt: SpanFinder, fits: number, max: number, measure: Measure): number[] {
  let cut = safeCut(rest, fits);
  for (let tries = 0; tries < 8 && cut > 1; tries++) {
    const closers = openWithin(spanAt, cut, 0, rest.length)
      .map((span) => span.close)
      .join('');
    const over = measure(rest.slice(0, cut) + closers) - max;
    if (over <= 0) {
      const space = rest.lastIndexOf(' ', cut);
      return space > cut / 2 ? [space, cut] : [cut];
    }
    cut = safeCut(rest, cut - over);
  }
  return [cut];
}
