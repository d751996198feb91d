import { describe, expect, it } from 'vitest';
import { withinShare } from '../../../src/store/contract.js';

/** A count over a clock the test moves: each count takes `tookMs` of it. */
function slowCount(tookMs: number) {
  let now = 0;
  let counted = 0;
  const count = withinShare(
    async () => {
      counted++;
      now += tookMs;
      return counted;
    },
    () => now,
  );
  return {
    count,
    counted: () => counted,
    wait: (ms: number) => {
      now += ms;
    },
  };
}

describe('a count of a table that only grows (/metrics, the overview)', () => {
  it('is asked again only after 100 times what it took: its scans hold the loop 1 % of the time at most', async () => {
    const c = slowCount(1000);
    expect(await c.count()).toBe(1);
    // However many scrapers ask meanwhile, the scan is not run again.
    for (let i = 0; i < 50; i++) {
      c.wait(1000);
      expect(await c.count()).toBe(1);
    }
    c.wait(50_000);
    expect(await c.count()).toBe(2);
    expect(c.counted()).toBe(2);
  });

  it('is one count at a time: asked together, they share it', async () => {
    const c = slowCount(1000);
    const answers = await Promise.all(Array.from({ length: 8 }, () => c.count()));
    expect(answers).toEqual(Array(8).fill(1));
    expect(c.counted()).toBe(1);
  });

  it('is always fresh while it is quick', async () => {
    const c = slowCount(1);
    expect(await c.count()).toBe(1);
    expect(await c.count()).toBe(2);
  });
});
