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

  it("count a stale signature's repeats by its words, whatever offset each sender picks", async () => {
    const logs: { level: number; msg: string; reason?: string; suppressed?: number }[] = [];
    const mapping = { id: 'slack', match: { path: 'slack' }, verify: { scheme: 'slack', secret: 'slack-secret' } };
    const { app, close } = await createTestApp(
      { hooks: { mappings: [{ ...mapping, action: 'wake', textTemplate: 'x' }] } },
      { logs },
    );
    try {
      const now = Math.floor(Date.now() / 1000);
      for (let i = 0; i < 200; i++) {
        const headers = { 'x-slack-signature': 'v0=00', 'x-slack-request-timestamp': String(now - 1000 - i) };
        await app.inject({ method: 'POST', url: '/hooks/slack', headers, payload: { text: 'x' } });
      }
      // One as the first came, one as its address was locked (20 failures): not one per offset.
      const refused = logs.filter((l) => l.msg === 'hook request refused: invalid signature');
      expect(refused).toHaveLength(2);
      expect(refused[0]?.reason).toMatch(/^the timestamp is 10\d\d s old/);
    } finally {
      await close();
    }
    expect(
      logs.filter((l) => l.msg === 'hook request refused: invalid signature').map((l) => l.suppressed ?? 0),
    ).toEqual([0, 0, 19, 179]);
  });
});
