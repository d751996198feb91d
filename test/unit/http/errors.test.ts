import Fastify from 'fastify';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { hookdError } from '../../../src/errors.js';
import { createLogLimiter, installErrorHandlers } from '../../../src/http/errors.js';

describe('createLogLimiter', () => {
  it('allows one line per key per interval and tells how many it held back', () => {
    let now = 0;
    const limiter = createLogLimiter(10_000, () => now);
    expect(limiter.allow('QUEUE_FULL')).toBe(0);
    expect(limiter.allow('QUEUE_FULL')).toBeUndefined();
    expect(limiter.allow('QUEUE_FULL')).toBeUndefined();
    expect(limiter.allow('TRANSFORM_FAILED')).toBe(0);
    now = 10_000;
    expect(limiter.allow('QUEUE_FULL')).toBe(2);
  });
});

describe('installErrorHandlers', () => {
  it('logs a flood of 503 QUEUE_FULL as one warn line without a stack, and INTERNAL at error', async () => {
    const lines: { level: number; msg: string; err?: unknown; alsoSince?: number }[] = [];
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
    expect(lines[0]).toMatchObject({ level: 40, msg: 'request refused', alsoSince: 0 });
    expect(lines[0]?.err).toBeUndefined();
    expect((await app.inject({ method: 'GET', url: '/bug' })).json()).toMatchObject({ code: 'INTERNAL' });
    expect(lines[1]).toMatchObject({ level: 50, msg: 'request failed', err: { message: 'a bug' } });
    await app.close();
  });
});
