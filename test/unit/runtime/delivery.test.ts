import { describe, expect, it } from 'vitest';
import { splitMessage } from '../../../src/channels/index.js';
import { isAckOnly } from '../../../src/runtime/index.js';

describe('isAckOnly', () => {
  it.each([
    ['HEARTBEAT_OK', true],
    ['  HEARTBEAT_OK\n', true],
    ['HEARTBEAT_OK all quiet', true],
    ['All quiet. HEARTBEAT_OK', true],
    [`HEARTBEAT_OK ${'x'.repeat(300)}`, true],
    [`HEARTBEAT_OK ${'x'.repeat(301)}`, false],
    ['The disk is full; HEARTBEAT_OK is not the point here.', false],
    ['NO_REPLY', false],
    ['', false],
  ])('%j → %s', (reply, expected) => expect(isAckOnly(reply, 300)).toBe(expected));
});

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
