import { describe, expect, it } from 'vitest';
import { isAckOnly } from '../../../../src/runtime/index.js';

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
