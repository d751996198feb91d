import { describe, expect, it } from 'vitest';
import { splitMessage } from '../../../src/channels/index.js';

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
