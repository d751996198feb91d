import { describe, expect, it } from 'vitest';
import { parseDurationMs } from '../../../src/config/index.js';

describe('parseDurationMs', () => {
  it.each([
    ['45s', 45_000],
    ['10m', 600_000],
    ['1h', 3_600_000],
    ['250ms', 250],
    ['0', 0],
    [0, 0],
  ] as const)('%j → %i ms', (input, ms) => expect(parseDurationMs(input)).toBe(ms));
});
