import { describe, expect, it } from 'vitest';
import { type Renderer, renderMarkdown } from '../../../src/channels/markdown.js';

/**
 * Reading a reply's Markdown (docs/channels.md#formatting): what each line is, and in time
 * linear in the reply, however hostile, since it runs on the event loop.
 */

/** Every piece named, so that a test sees what the reply was read as. */
const tags: Renderer = {
  text: (s) => s,
  code: (s) => `<code>${s}</code>`,
  bold: (inner) => `<b>${inner}</b>`,
  italic: (inner) => `<i>${inner}</i>`,
  strike: (inner) => `<s>${inner}</s>`,
  link: (label, url) => `<a ${url}>${label}</a>`,
  codeBlock: (code, language) => `<pre ${language}>${code}</pre>`,
  heading: (inner) => `<h>${inner}</h>`,
  quote: (lines) => `<q>${lines}</q>`,
  bullet: (inner) => `<li>${inner}</li>`,
};
const render = (text: string) => renderMarkdown(text, tags);

/**
 * The bound of a test whose reply took minutes to read before (the time is in its comment), and
 * takes milliseconds read in linear time: load lengthens both.
 */
const HOSTILE = { timeout: 20_000 };

describe('a line', () => {
  it('is a heading after one to six #, its closing #s and spaces left out', () => {
    expect(render('## Title ##')).toBe('<h>Title</h>');
    expect(render('   #\tTitle  # ')).toBe('<h>Title</h>');
    expect(render('# Title\r')).toBe('<h>Title</h>');
    expect(render('# a # b')).toBe('<h>a # b</h>');
    expect(render('# #')).toBe('<h></h>');
    expect(render('#')).toBe('#');
    expect(render('#Title')).toBe('#Title');
    expect(render('    # Title')).toBe('    # Title');
    expect(render('####### Title')).toBe('####### Title');
    // A carriage return inside the line: not a heading, as before.
    expect(render('# a\rb')).toBe('# a\rb');
    expect(render('#  \r x')).toBe('<h>x</h>');
  });

  it('is a list item after -, * or +, its indent kept', () => {
    expect(render('- item')).toBe('<li>item</li>');
    expect(render('  *\t**item**')).toBe('  <li><b>item</b></li>');
    expect(render('+ a\rb')).toBe('+ a\rb');
    expect(render('-item')).toBe('-item');
  });

  it('opens a code block with three or more ` or ~, its first word the language', () => {
    expect(render('```ts\nconst a = 1;\n```')).toBe('<pre ts>const a = 1;</pre>');
    expect(render('   ~~~~  py  title="x"\nx\n~~~~')).toBe('<pre py>x</pre>');
    expect(render('```\nx')).toBe('<pre >x</pre>');
    expect(render('``` `x`\ny')).toBe('``<code> </code>x`\ny');
    expect(render('    ```\nx')).toBe('    ```\nx');
  });

  // Before: 230 s for these two lines (the heading's pattern backtracked over the spaces: cubic in
  // them, and to the fourth power before a carriage return).
  it('of a heading with a long run of spaces is read at once', HOSTILE, () => {
    expect(render(`# a${' '.repeat(6_000)}b`)).toBe(`<h>a${' '.repeat(6_000)}b</h>`);
    expect(render(`#${' '.repeat(1_000)}x\ry`)).toBe(`#${' '.repeat(1_000)}x\ry`);
  });

  // Before: 105 s (the list item's pattern backtracked over the spaces before a carriage return).
  it('of a list item with a long run of spaces is read at once', HOSTILE, () => {
    const spaces = ' '.repeat(400_000);
    expect(render(`-${spaces}x\ry`)).toBe(`-${spaces}x\ry`);
  });

  // Before: 95 s (the fence's pattern backtracked over the spaces before a backtick).
  it('of a fence with a long run of spaces is read at once', HOSTILE, () => {
    const spaces = ' '.repeat(400_000);
    expect(render(`\`\`\`${spaces}\``)).toBe(`\`\`<code>${spaces.slice(2)}</code>`);
  });
});

describe('inline Markdown', () => {
  it('reads code spans, links and bold, italic and strike pairs', () => {
    const cases = [
      [
        '**bold** and *it* and __b__ and _i_ and ~~s~~',
        '<b>bold</b> and <i>it</i> and <b>b</b> and <i>i</i> and <s>s</s>',
      ],
      ['snake_case_name and 2*3*4 and a * b * c', 'snake_case_name and 2<i>3</i>4 and a * b * c'],
      ['***both*** and **a *b* c** and *a **b** c*', '<b>*both</b>* and <b>a <i>b</i> c</b> and <i>a <b>b</b> c</i>'],
      [
        '`code` and ``a ` b`` and ` x ` and ```a``',
        '<code>code</code> and <code>a ` b</code> and <code>x</code> and `<code>a</code>',
      ],
      [
        '[label **b**](https://x.example/p?a=1) and [a](b c)',
        '<a https://x.example/p?a=1>label <b>b</b></a> and [a](b c)',
      ],
      [
        '[outer [inner](https://u.example)](v) and [](https://u.example) and [x]()',
        '<a https://u.example>outer [inner</a>](v) and <a https://u.example></a> and [x]()',
      ],
      ['\\*not\\* and \\`not\\` and \\[not](u)', '*not* and `not` and [not](u)'],
      ['*a [*b*](u) c*', '<i>a [</i>b<i>](u) c</i>'],
      ['_a_b_ and __a__b and a__b__', '<i>a_b</i> and <b>a__b and a__b</b>'],
    ];
    for (const [text, read] of cases) expect(render(text as string), text).toBe(read);
  });

  it('makes a link only to a web page or a mail address: any other stays as written, as text', () => {
    expect(render('[a](https://x.example/p) [b](HTTP://x.example) [c](mailto:c@x.example)')).toBe(
      '<a https://x.example/p>a</a> <a HTTP://x.example>b</a> <a mailto:c@x.example>c</a>',
    );
    expect(render('[everyone](!channel) [**boss**](@U024BE7LH) [me](tg://user?id=42) [x](javascript:go)')).toBe(
      '[everyone](!channel) [<b>boss</b>](@U024BE7LH) [me](tg://user?id=42) [x](javascript:go)',
    );
    const escaping = { ...tags, text: (s: string) => s.replace(/</g, '&lt;').replace(/>/g, '&gt;') };
    expect(renderMarkdown('[all](<!channel>)', escaping)).toBe('[all](&lt;!channel&gt;)');
  });

  // Before, each marker that opened nothing was searched forward to the end of its line for a
  // closer: minutes for these lines (timed in the comments), each its own text again here.
  it.each([
    ['`*x ` (130 s)', '*x '.repeat(85_000)],
    ['`_x ` (136 s)', '_x '.repeat(85_000)],
    ['`**x ` (115 s)', '**x '.repeat(40_000)],
    ['`~~x ` (80 s)', '~~x '.repeat(64_000)],
    ['`[]` (101 s)', '[]'.repeat(150_000)],
  ])('of a line of %s is read at once', (_, line) => expect(render(line)).toBe(line), HOSTILE.timeout);

  // Before: 99 s (each backtick of each run looked for a run as long as the rest of its own).
  it('of runs of backticks, each longer than the last, is read at once', HOSTILE, () => {
    let line = '';
    for (let run = 1; line.length < 64_000; run++) line += `${'`'.repeat(run)} `;
    expect(render(line)).toBe(line);
  });
});
