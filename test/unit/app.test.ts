import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

describe('server.trustProxy', () => {
  it('throttles by X-Forwarded-For when on, and by the socket address when off', async () => {
    t = await createTestApp({ server: { trustProxy: true } });
    const fail = (ip: string) =>
      t?.app.inject({ method: 'POST', url: '/hooks/wake', headers: { 'x-forwarded-for': ip }, payload: { text: 'x' } });
    for (let i = 0; i < 20; i++) await fail('203.0.113.7');
    expect((await fail('203.0.113.7'))?.statusCode).toBe(429);
    expect((await fail('203.0.113.8'))?.statusCode).toBe(401);
    await t.close();
    t = await createTestApp();
    const direct = (ip: string) =>
      t?.app.inject({ method: 'POST', url: '/hooks/wake', headers: { 'x-forwarded-for': ip }, payload: { text: 'x' } });
    for (let i = 0; i < 20; i++) await direct(`198.51.100.${i}`);
    expect((await direct('198.51.100.200'))?.statusCode).toBe(429);
  });
});
