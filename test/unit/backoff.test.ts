import { describe, expect, it } from 'vitest';
import { backoffMs } from '../../src/backoff.js';

describe('backoffMs', () => {
  it('doubles from minMs per attempt and stops at maxMs', () => {
    const bounds = { minMs: 250, maxMs: 5000 };
    expect([0, 1, 2, 3, 4, 5, 6].map((attempt) => backoffMs(attempt, bounds))).toEqual([
      250, 500, 1000, 2000, 4000, 5000, 5000,
    ]);
  });

  it('treats a negative attempt as the first', () => {
    expect(backoffMs(-1, { minMs: 1000, maxMs: 30_000 })).toBe(1000);
  });
});
