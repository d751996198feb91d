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
