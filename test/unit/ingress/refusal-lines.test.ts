import { describe, expect, it } from 'vitest';
import { createTestApp } from '../../helpers/app.js';

/**
 * The log lines of refused hook requests: how many there are is the sender's choice (18,000
 * wrong tokens a second from one address), so repeats within 10 s are one line with their count,
 * never a line each and never dropped unsaid (docs/operations.md#backpressure).
 */
describe('refused hook requests in the log', () => {
  it('are a line for the first and one line counting the rest, per reason, however many arrive', async () => {
    const logs: { level: number; msg: string; ip?: string; locked?: boolean; suppressed?: number }[] = [];
    const { app, close } = await createTestApp({ hooks: { allowQueryToken: true } }, { logs });
    try {
      const wrong = { authorization: 'Bearer not-the-hook-token-000000' };
      const answers = new Map<number, number>();
      for (let i = 0; i < 300; i++) {
        const res = await app.inject({ method: 'POST', url: '/hooks/wake', headers: wrong, payload: { text: 'x' } });
        answers.set(res.statusCode, (answers.get(res.statusCode) ?? 0) + 1);
      }
      // 20 wrong tokens lock the address: the rest are 429.
      expect(Object.fromEntries(answers)).toEqual({ 401: 20, 429: 280 });
      for (let i = 0; i < 50; i++)
        await app.inject({
          method: 'POST',
          url: '/hooks/wake?token=hook-token-0123456789abcdef',
          payload: { text: 'x' },
        });
      const refusedNow = logs.filter((l) => l.msg.startsWith('hook request refused'));
      // One as the first wrong token came, one as the lock began; the repeats wait for their line.
      expect(refusedNow.map((l) => l.locked)).toEqual([false, true]);
      expect(refusedNow[0]?.ip).toBe('127.0.0.1');
      expect(logs.filter((l) => l.msg.startsWith('the ?token= query parameter is deprecated'))).toHaveLength(1);
    } finally {
      await close();
    }
    // Closing writes what was held back, counted: nothing is dropped unsaid.
    const refused = logs.filter((l) => l.msg.startsWith('hook request refused'));
    expect(refused.map((l) => [l.locked, l.suppressed ?? 0])).toEqual([
      [false, 0],
      [true, 0],
      [false, 19],
      [true, 279],
    ]);
    expect(logs.filter((l) => l.msg.startsWith('the ?token=')).map((l) => l.suppressed ?? 0)).toEqual([0, 49]);
  });
});
