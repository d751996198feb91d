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

describe('server.trustProxy never takes a left-most X-Forwarded-For entry a client wrote (DESIGN §5)', () => {
  const failUntilLocked = async (xff: string) => {
    for (let i = 0; i < 20; i++) {
      await t?.app.inject({ method: 'POST', url: '/hooks/wake', headers: { 'x-forwarded-for': xff }, payload: {} });
    }
  };
  const statusFor = async (xff: string) =>
    (await t?.app.inject({ method: 'POST', url: '/hooks/wake', headers: { 'x-forwarded-for': xff }, payload: {} }))
      ?.statusCode;

  it.each([
    ['true (one proxy)', true],
    ['a hop count of 1', 1],
    ['the proxy address', ['127.0.0.1']],
  ])('with %s, the client is the address the proxy saw', async (_name, trustProxy) => {
    t = await createTestApp({ server: { trustProxy } });
    // The attacker writes a victim's address in front of their own.
    await failUntilLocked('192.0.2.66, 203.0.113.9');
    expect(await statusFor('203.0.113.9')).toBe(429);
    expect(await statusFor('192.0.2.66')).toBe(401);
  });

  it('with two hops, the client is the address the second proxy saw', async () => {
    t = await createTestApp({ server: { trustProxy: 2 } });
    await failUntilLocked('192.0.2.66, 203.0.113.9, 10.0.0.2');
    expect(await statusFor('203.0.113.9, 10.0.0.3')).toBe(429);
    expect(await statusFor('192.0.2.66, 10.0.0.2')).toBe(401);
  });
});
