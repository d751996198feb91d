import { describe, expect, it, vi } from 'vitest';
import { deadline } from '../../../src/runtime/timeout.js';

describe('deadline', () => {
  it('takes fractions and huge values that AbortSignal.timeout refuses', () => {
    expect(() => AbortSignal.timeout(1234.5)).toThrow();
    const shutdown = new AbortController();
    for (const seconds of [1.2345, 1e12]) {
      const d = deadline(seconds, shutdown.signal);
      expect(d.signal.aborted).toBe(false);
      d.done();
    }
  });

  it('tells its time limit from a shutdown, and leaves no listener on the shutdown signal once done', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const shutdown = new AbortController();
      const timed = deadline(2, shutdown.signal);
      vi.advanceTimersByTime(2000);
      expect([timed.signal.aborted, timed.timedOut]).toEqual([true, true]);
      timed.done();
      const cut = deadline(2, shutdown.signal);
      const quiet = deadline(2, shutdown.signal);
      quiet.done();
      shutdown.abort(new Error('stopping'));
      expect([cut.signal.aborted, cut.timedOut, cut.signal.reason]).toEqual([true, false, shutdown.signal.reason]);
      // The one done before the shutdown neither aborted nor kept its timer.
      expect(quiet.signal.aborted).toBe(false);
      expect(vi.getTimerCount()).toBe(1);
      cut.done();
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
});
