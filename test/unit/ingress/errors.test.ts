import Fastify from 'fastify';
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { hookdError } from '../../../src/errors.js';
import { installErrorHandlers } from '../../../src/ingress/errors.js';
import { createLogWindow } from '../../../src/log-window.js';

describe('createLogWindow', () => {
  afterEach(() => vi.useRealTimers());

  it('logs the first at once, then once per interval with the count held back, never dropping one unsaid', () => {
    vi.useFakeTimers();
    const lines: [string, number][] = [];
    const window = createLogWindow<string>(10_000, (item, suppressed) => lines.push([item, suppressed]));
    window.report('a', 'a1');
    window.report('a', 'a2');
    window.report('a', 'a3');
    window.report('b', 'b1');
    expect(lines).toEqual([
      ['a1', 0],
      ['b1', 0],
    ]);
    vi.advanceTimersByTime(10_000);
    // The last one held back stands for the two.
    expect(lines.slice(2)).toEqual([['a3', 2]]);
    window.report('a', 'a4');
    vi.advanceTimersByTime(10_000);
    expect(lines.slice(3)).toEqual([['a4', 1]]);
    // A quiet interval closes the key: the next one is logged at once.
    vi.advanceTimersByTime(10_000);
    window.report('a', 'a5');
    expect(lines.slice(4)).toEqual([['a5', 0]]);
    window.report('a', 'a6');
    window.flush();
    expect(lines.slice(5)).toEqual([['a6', 1]]);
  });
});

describe('installErrorHandlers', () => {
  it('logs a flood of 503 QUEUE_FULL as one warn line without a stack, and INTERNAL at error', async () => {
    const lines: { level: number; msg: string; err?: unknown; suppressed?: number }[] = [];
    const log = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    const app = Fastify();
    installErrorHandlers(app, log);
    app.get('/full', async () => {
      throw hookdError('QUEUE_FULL', undefined, { headers: { 'retry-after': '30' } });
    });
    app.get('/bug', async () => {
      throw new Error('a bug');
    });
    for (let i = 0; i < 50; i++) {
      const res = await app.inject({ method: 'GET', url: '/full' });
      expect(res.statusCode).toBe(503);
      expect(res.headers['retry-after']).toBe('30');
    }
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 40, msg: 'request refused', code: 'QUEUE_FULL' });
    expect(lines[0]?.suppressed).toBeUndefined();
    expect(lines[0]?.err).toBeUndefined();
    expect((await app.inject({ method: 'GET', url: '/bug' })).json()).toMatchObject({ code: 'INTERNAL' });
    expect(lines[1]).toMatchObject({ level: 50, msg: 'request failed', err: { message: 'a bug' } });
    // The 49 held back are said when the interval ends, or at the latest when the gateway closes.
    await app.close();
    expect(lines[2]).toMatchObject({ level: 40, msg: 'request refused', code: 'QUEUE_FULL', suppressed: 49 });
  });

  it("logs a failed transform per mapping, with its message and the author's file:line:column", async () => {
    const lines: Record<string, unknown>[] = [];
    const log = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    const app = Fastify();
    installErrorHandlers(app, log);
    const location = { file: 'meterly.ts', line: 5, column: 32 };
    app.get('/:mapping', async (request) => {
      const { mapping } = request.params as { mapping: string };
      throw hookdError('TRANSFORM_FAILED', { reason: 'boom', mapping, location });
    });
    for (const url of ['/meterly', '/meterly', '/meterly', '/github']) {
      const res = await app.inject({ method: 'GET', url });
      expect(res.json()).toMatchObject({ code: 'TRANSFORM_FAILED', error: 'transform failed: meterly.ts:5:32: boom' });
    }
    const line = { level: 40, msg: 'transform failed', code: 'TRANSFORM_FAILED', at: 'meterly.ts:5:32' };
    expect(lines).toEqual([
      expect.objectContaining({ ...line, mapping: 'meterly', error: 'transform failed: meterly.ts:5:32: boom' }),
      expect.objectContaining({ ...line, mapping: 'github' }),
    ]);
    await app.close();
    expect(lines[2]).toMatchObject({ ...line, mapping: 'meterly', suppressed: 2, intervalMs: 10_000 });
  });
});
