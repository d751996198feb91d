import { describe, expect, it } from 'vitest';
import { splitMarkdown, splitMessage } from '../../../src/channels/index.js';
import { renderMarkdown } from '../../../src/channels/markdown.js';
import { MAX_SPLIT_CHARS } from '../../../src/channels/split.js';

/** Nothing of `text` lost or added but white space and the markers that close and reopen spans. */
const intactLetters = (parts: readonly string[], text: string) =>
  expect(parts.join('').replace(/[\s`*_~[\]()]/g, '')).toBe(text.replace(/[\s`*_~[\]()]/g, ''));

describe('splitMessage', () => {
  it('keeps short texts whole', () => expect(splitMessage('hi', 4096)).toEqual(['hi']));

  it('splits at line boundaries, every piece within the limit, nothing lost', () => {
    const text = Array.from({ length: 300 }, (_, i) => `line ${i} ${'x'.repeat(30)}`).join('\n');
    const pieces = splitMessage(text, 4096);
    expect(pieces.length).toBe(3);
    for (const p of pieces) expect(p.length).toBeLessThanOrEqual(4096);
    expect(pieces.join('\n')).toBe(text);
  });

  it('hard-splits a text without spaces and never cuts a surrogate pair', () => {
    const text = `${'a'.repeat(4095)}😀${'b'.repeat(10)}`;
    const pieces = splitMessage(text, 4096);
    expect(pieces[0]).toBe('a'.repeat(4095));
    expect(pieces.join('')).toBe(text);
  });
});

describe('a runaway reply', () => {
  it('is cut at MAX_SPLIT_CHARS with a note of what was left out, in at most 8 parts of 4,000', () => {
    const reply = 'word '.repeat(200_000);
    const parts = splitMarkdown(reply, 4000);
    expect(parts.length).toBeLessThanOrEqual(8);
    expect(parts.join(' ').length).toBeLessThanOrEqual(MAX_SPLIT_CHARS);
    expect(parts.at(-1)).toMatch(
      /\[… 968\d{3} more characters cut by hookd: the whole reply is in the run's record\]$/,
    );
    expect(splitMarkdown('x'.repeat(MAX_SPLIT_CHARS), 4000).join('')).toBe('x'.repeat(MAX_SPLIT_CHARS));
  });

  it('is measured line by line: many short lines cost about their own length, not a part for each', () => {
    let measured = 0;
    const counting = (part: string) => {
      measured += part.length;
      return part.length + (part.match(/&/g)?.length ?? 0) * 4;
    };
    const reply = 'a &\n'.repeat(7_900);
    const parts = splitMarkdown(reply, 4000, counting);
    for (const p of parts) expect(counting(p)).toBeLessThanOrEqual(4000);
    expect(parts.join('\n')).toBe(reply.trimEnd());
    // Measured whole for each line added, it was 8 parts × 1,000 lines × 4,000 characters.
    expect(measured).toBeLessThan(10 * reply.length);
  });

  it('splits again, measured whole, a part its lines misjudged', () => {
    // A measure in which joining lines costs more than the lines (a pair across lines).
    const measure = (part: string) => part.length + (part.includes('\n') ? 50 : 0);
    const reply = Array.from({ length: 40 }, (_, i) => `line ${i} ${'y'.repeat(90)}`).join('\n');
    const parts = splitMarkdown(reply, 1000, measure);
    for (const p of parts) expect(measure(p)).toBeLessThanOrEqual(1000);
    expect(parts.join('\n')).toBe(reply);
  });
});

describe('a hostile reply', () => {
  // Before: 53 s and 84 s for these lines, split for Telegram's 4,096 and Discord's 2,000 (each
  // marker that opened nothing was searched forward to the end of the line, for each part).
  it.each([
    ['`_x `', '_x '.repeat(10_666).trim()],
    ['`**x `', '**x '.repeat(8_000).trim()],
  ])(
    'of one line of %s is split at once',
    (_, line) => {
      for (const max of [4096, 2000]) {
        const parts = splitMarkdown(line, max);
        for (const part of parts) expect(part.length).toBeLessThanOrEqual(max);
        expect(parts.join(' ')).toBe(line);
      }
    },
    20_000,
  );
});

describe('a long line or code block', () => {
  const escaped = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  /** Slack's way: the part rendered, its text escaped, a pair's markers halved. */
  const rendered = (part: string) =>
    renderMarkdown(part, {
      text: escaped,
      code: escaped,
      bold: (inner) => `*${inner}*`,
      italic: (inner) => `_${inner}_`,
      strike: (inner) => `~${inner}~`,
      link: (label, url) => `<${url}|${label}>`,
      codeBlock: (code) => `\`\`\`\n${escaped(code)}\n\`\`\``,
      heading: (inner) => inner,
      quote: (lines) => lines,
      bullet: (inner) => inner,
    }).length;
  /** The characters measured splitting `text` into parts of 2,000 as rendered. */
  const measured = (text: string) => {
    let chars = 0;
    const parts = splitMarkdown(text, 2000, (part) => {
      chars += part.length;
      return rendered(part);
    });
    for (const part of parts) expect(rendered(part)).toBeLessThanOrEqual(2000);
    return chars;
  };

  // Each part of a line was found by bisecting the whole rest of the line (a quarter as long
  // measured eight times as much, not four), and a code block measured its whole part again for
  // each line added (131 characters measured for each of the block's).
  it.each([
    ['a line of words', (n: number) => 'word & more '.repeat(n / 12)],
    ['a bold span longer than a part', (n: number) => `**${'word '.repeat(n / 5)}**`],
    ['a code block of short lines', (n: number) => `\`\`\`\n${'x &\n'.repeat(n / 4)}\`\`\``],
  ])('is measured in time linear in it: %s', (_, reply) => {
    const quarter = measured(reply(7_500));
    const whole = measured(reply(30_000));
    expect(whole / quarter).toBeLessThan(5.5);
    expect(whole / 30_000).toBeLessThan(24);
  });
});

describe('a part whose spans are closed at its end', () => {
  const escaped = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  /** Slack's mrkdwn, as slack.ts renders it. */
  const mrkdwn = (part: string) =>
    renderMarkdown(part, {
      text: escaped,
      code: (s) => `\`${escaped(s)}\``,
      bold: (inner) => `*${inner}*`,
      italic: (inner) => `_${inner}_`,
      strike: (inner) => `~${inner}~`,
      link: (label, url) => `<${url}|${label}>`,
      codeBlock: (code) => `\`\`\`\n${escaped(code)}\n\`\`\``,
      heading: (inner) => `*${inner}*`,
      quote: (lines) => lines,
      bullet: (inner) => `• ${inner}`,
    }).length;

  // Before: a cut that fitted with the closers of the spans open there was moved back to a
  // space, and the part sent was never measured: "a` R&D`" (11 of 10: the closing backtick met
  // the lone one), "` R&D`" (10 of 9). Found on 1-2 of 300 model-like replies to Slack, 4,001 of 4,000.
  it.each([
    ['a` R&D `f()` *', 10],
    ['` R&D `f()`', 9],
  ] as const)('is within the limit as sent: %s in parts of %i', (text, max) => {
    const parts = splitMarkdown(text, max, mrkdwn);
    for (const part of parts) expect(mrkdwn(part), part).toBeLessThanOrEqual(max);
    intactLetters(parts, text);
  });
  // Before: when the closers alone did not fit (a link to a URL longer than a part), the line was
  // cut after the link's `[`, closed and reopened: the same rest again, for ever, 4 KB more held
  // at each turn and the event loop never back. Measured here at most 5,000 times.
  it('ends, when a link goes to a URL longer than a part: the link is cut through as text', () => {
    const text = `[${'word '.repeat(2_000)}](https://x.example/${'a'.repeat(4_100)})`;
    let calls = 0;
    const parts = splitMarkdown(text, 4000, (part) => {
      calls += 1;
      if (calls > 5_000) throw new Error('measured more than 5,000 times');
      return part.length;
    });
    for (const part of parts) expect(part.length).toBeLessThanOrEqual(4000);
    expect(parts.length).toBeLessThanOrEqual(6);
    expect(parts.join('').replace(/\s/g, '')).toBe(text.replace(/\s/g, ''));
  });
});

describe('a span or a fence whose markers would fill the parts', () => {
  /** Characters, as many as Telegram counts, measured at most `budget` times. */
  const within = (budget: number) => {
    let calls = 0;
    return (part: string) => {
      calls += 1;
      if (calls > budget) throw new Error(`measured more than ${budget} times`);
      return part.length;
    };
  };
  const intact = (parts: readonly string[], text: string) =>
    expect(parts.join('').replace(/\s/g, '')).toBe(text.replace(/\s/g, ''));

  // Before: 267 parts of 4,000 characters, each with 80 of the label and all of the URL.
  it('is cut through as text, when a link goes to a URL nearly as long as a part', () => {
    const text = `[${'word '.repeat(4_000)}](https://x.example/${'a'.repeat(3_900)})`;
    for (const measure of [undefined, within(5_000)]) {
      const parts = splitMarkdown(text, 4000, measure);
      for (const part of parts) expect(part.length).toBeLessThanOrEqual(4000);
      expect(parts.length).toBeLessThanOrEqual(8);
      intact(parts, text);
    }
  });

  // Before: 10,000 parts of 4,000 characters, each the fence line and two characters of code.
  it('is sent as lines, when a code block opens with a line nearly as long as a part', () => {
    const text = `\`\`\`${'a'.repeat(3_990)}\n${'x'.repeat(20_000)}\n\`\`\``;
    for (const measure of [undefined, within(5_000)]) {
      const parts = splitMarkdown(text, 4000, measure);
      for (const part of parts) expect(part.length).toBeLessThanOrEqual(4000);
      expect(parts.length).toBeLessThanOrEqual(8);
      intact(parts, text);
    }
  });
});
