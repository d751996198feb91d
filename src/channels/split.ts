import { fenceOf } from './markdown.js';
import { cutAt, largestFitting, type Measure, safeCut, splitLine } from './split-line.js';

export type { Measure } from './split-line.js';

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
      const pieces = splitCode(block, max, measure);
      if (pieces === undefined) {
        for (const line of block.text.split('\n')) add(line);
        continue;
      }
      flush();
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

/**
 * A code block too long for one part, as parts that each open and close its fence; undefined
 * when its fence lines take half a part or more (they would go again with every few characters
 * of code, thousands of parts: the block is then split as lines of text).
 */
function splitCode(block: CodeBlock, max: number, measure: Measure): string[] | undefined {
  const wrap = (body: readonly string[]) => [block.open, ...body, block.close].join('\n');
  const room = max - measure(wrap(['']));
  if (room < max / 2) return undefined;
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

/** `text` without the newlines it ends with (a pattern for it backtracked over a run of them). */
function withoutTrailingNewlines(text: string): string {
  let end = text.length;
  while (end > 0 && text[end - 1] === '\n') end--;
  return text.slice(0, end);
}
