import { describe, expect, it } from 'vitest';
import { splitMarkdown } from '../../../src/channels/index.js';

/** Splitting a Markdown reply (docs/channels.md#formatting): within the limit, never inside a code block or a pair. */

const fences = (part: string) => (part.match(/^```/gm) ?? []).length;

describe('splitMarkdown', () => {
  it('keeps a reply within the limit whole', () => {
    expect(splitMarkdown('**hi** there', 100)).toEqual(['**hi** there']);
  });

  it('moves a code block that fits into the next part instead of cutting it', () => {
    const code = '```js\nconst a = 1;\nconst b = 2;\n```';
    const text = `${'intro words '.repeat(4).trim()}\n${code}`;
    const parts = splitMarkdown(text, 60);
    expect(parts).toEqual(['intro words intro words intro words intro words', code]);
  });

  it('closes a code block too long for one part at the end of each part and opens it again, with its language', () => {
    const lines = Array.from({ length: 30 }, (_, i) => `line(${i});`);
    const text = `\`\`\`ts\n${lines.join('\n')}\n\`\`\``;
    const parts = splitMarkdown(text, 100);
    expect(parts.length).toBeGreaterThan(1);
    for (const part of parts) {
      expect(part.length).toBeLessThanOrEqual(100);
      expect(part.startsWith('```ts\n')).toBe(true);
      expect(part.endsWith('\n```')).toBe(true);
      expect(fences(part)).toBe(2);
    }
    const body = parts.flatMap((p) => p.split('\n').slice(1, -1));
    expect(body).toEqual(lines);
  });

  it('cuts a long line between words outside its formatting pairs and links', () => {
    const text = `${'word '.repeat(10)}**bold words that stay together** then [a link text](https://example.com/x) end`;
    const parts = splitMarkdown(text, 70);
    for (const part of parts) {
      expect(part.length).toBeLessThanOrEqual(70);
      expect((part.match(/\*\*/g) ?? []).length % 2).toBe(0);
      expect((part.match(/\[/g) ?? []).length).toBe((part.match(/\]\(/g) ?? []).length);
    }
    expect(parts.join(' ').replace(/\s+/g, ' ')).toBe(text.replace(/\s+/g, ' '));
  });

  it('closes and reopens a pair too long for one part', () => {
    const text = `**${'long bold '.repeat(20).trim()}**`;
    const parts = splitMarkdown(text, 50);
    expect(parts.length).toBeGreaterThan(1);
    for (const part of parts) {
      expect(part.length).toBeLessThanOrEqual(50);
      expect(part.startsWith('**') && part.endsWith('**')).toBe(true);
    }
  });

  it('measures parts as the service counts them', () => {
    const text = '<<<<<<<<<< '.repeat(20).trim();
    // Each < becomes &lt; for a service that wants HTML-escaped text: four times longer.
    const escaped = (part: string) => part.replace(/</g, '&lt;').length;
    for (const part of splitMarkdown(text, 120, escaped)) expect(escaped(part)).toBeLessThanOrEqual(120);
  });
});
