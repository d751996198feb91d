import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ActionSink, IdempotentAnswer } from '../../../src/actions/index.js';
import { createInFlightKeys, idempotencyKeyOf, requestKeyOf, storedKeyOf } from '../../../src/ingress/idempotency.js';
import { AUTH, createTestApp, type TestApp } from '../../helpers/app.js';

let t: TestApp | undefined;
afterEach(async () => {
  vi.useRealTimers();
  await t?.close();
  t = undefined;
});

const count = (table: string) => {
  if (!t) throw new Error('no app');
  return (t.store.db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
};

describe('idempotency (docs/operations.md#idempotency)', () => {
  it('answers a repeat with the first response, marked replayed, and starts nothing', async () => {
    t = await createTestApp();
    const send = (key: string, payload: object, url = '/hooks/agent') =>
      t?.app.inject({ method: 'POST', url, headers: { ...AUTH, 'idempotency-key': key }, payload });
    const first = await send('k-1', { message: 'once' });
    expect(first?.statusCode).toBe(202);
    expect(first?.headers['idempotent-replayed']).toBeUndefined();
    const again = await send('k-1', { message: 'once' });
    expect(again?.statusCode).toBe(202);
    expect(again?.headers['idempotent-replayed']).toBe('true');
    expect(again?.json()).toEqual(first?.json());
    expect(count('runs')).toBe(1);
    const other = await t.app.inject({
      method: 'POST',
      url: '/hooks/agent',
      headers: { ...AUTH, 'x-service-idempotency-key': 'k-1' },
      payload: { message: 'different' },
    });
    expect(other.statusCode).toBe(409);
    expect(other.json()).toMatchObject({
      code: 'IDEMPOTENCY_CONFLICT',
      error: 'this Idempotency-Key was used with a different body',
    });
    expect(count('runs')).toBe(1);
  });

  it('scopes keys per sub-path', async () => {
    t = await createTestApp();
    await t.app.inject({
      method: 'POST',
      url: '/hooks/agent',
      headers: { ...AUTH, 'idempotency-key': 'same' },
      payload: { message: 'm' },
    });
    const wake = await t.app.inject({
      method: 'POST',
      url: '/hooks/wake',
      headers: { ...AUTH, 'idempotency-key': 'same' },
      payload: { text: 't' },
    });
    expect(wake.statusCode).toBe(200);
    expect(wake.headers['idempotent-replayed']).toBeUndefined();
  });

  it('answers 409 to a repeat that arrives while the first is still being processed', async () => {
    t = await createTestApp();
    const send = () =>
      t?.app.inject({
        method: 'POST',
        url: '/hooks/wake',
        headers: { ...AUTH, 'idempotency-key': 'race' },
        payload: { text: 'x' },
      });
    const [a, b] = await Promise.all([send(), send()]);
    expect([a?.statusCode, b?.statusCode].sort()).toEqual([200, 409]);
    expect([a, b].find((r) => r?.statusCode === 409)?.json().code).toBe('IDEMPOTENCY_IN_FLIGHT');
    expect(count('events')).toBe(1);
  });

  it('records only 2xx answers: a failed request is processed anew when retried', async () => {
    t = await createTestApp();
    const bad = await t.app.inject({
      method: 'POST',
      url: '/hooks/wake',
      headers: { ...AUTH, 'idempotency-key': 'retry' },
      payload: { text: '' },
    });
    expect(bad.statusCode).toBe(400);
    const good = await t.app.inject({
      method: 'POST',
      url: '/hooks/wake',
      headers: { ...AUTH, 'idempotency-key': 'retry' },
      payload: { text: '' },
    });
    expect(good.statusCode).toBe(400);
    const fixed = await t.app.inject({
      method: 'POST',
      url: '/hooks/wake',
      headers: { ...AUTH, 'idempotency-key': 'retry2' },
      payload: { text: 'ok' },
    });
    expect(fixed.statusCode).toBe(200);
  });

  it('remembers a 204 too', async () => {
    t = await createTestApp({ hooks: { presets: ['mail'] } });
    const send = () =>
      t?.app.inject({
        method: 'POST',
        url: '/hooks/mail',
        headers: { ...AUTH, 'idempotency-key': 'empty' },
        payload: { messages: [] },
      });
    expect((await send())?.statusCode).toBe(204);
    const again = await send();
    expect(again?.statusCode).toBe(204);
    expect(again?.headers['idempotent-replayed']).toBe('true');
  });

  it('refuses a malformed key', async () => {
    t = await createTestApp();
    const res = await t.app.inject({
      method: 'POST',
      url: '/hooks/wake',
      headers: { ...AUTH, 'idempotency-key': 'a b' },
      payload: { text: 'x' },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatch(/Idempotency-Key/);
  });

  it('forgets a key after hooks.idempotency.ttlSeconds: a repeat is then processed anew', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    t = await createTestApp({ hooks: { idempotency: { ttlSeconds: 60 } } });
    const send = () =>
      t?.app.inject({
        method: 'POST',
        url: '/hooks/wake',
        headers: { ...AUTH, 'idempotency-key': 'ttl' },
        payload: { text: 'x' },
      });
    const first = await send();
    vi.advanceTimersByTime(59_999);
    const replayed = await send();
    expect(replayed?.headers['idempotent-replayed']).toBe('true');
    expect(replayed?.json()).toEqual(first?.json());
    vi.advanceTimersByTime(1);
    const fresh = await send();
    expect(fresh?.statusCode).toBe(200);
    expect(fresh?.headers['idempotent-replayed']).toBeUndefined();
    expect(fresh?.json().eventId).not.toBe(first?.json().eventId);
    expect(count('events')).toBe(2);
  });
});

describe('what a key is stored as', () => {
  it("keeps a short plain key or scope as it is, and stores a long or odd one (a sender's delivery id, a path) as its digest", () => {
    expect(storedKeyOf('github')).toBe('github');
    expect(storedKeyOf('x'.repeat(255))).toBe('x'.repeat(255));
    const long = storedKeyOf('d'.repeat(10_000));
    expect(long).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(storedKeyOf('d'.repeat(10_000))).toBe(long);
    expect(storedKeyOf('d'.repeat(10_001))).not.toBe(long);
    expect(storedKeyOf('with space')).toMatch(/^sha256:/);
    // A sender's signed delivery id is stored alike; a key the request names is checked.
    const signed = (webhookId: string) => ({ webhookId, scheme: 'github' });
    expect(requestKeyOf({}, 'github', signed('e'.repeat(4000)))?.key).toMatch(/^sha256:/);
    expect(requestKeyOf({}, 'github', signed('delivery-1'))?.key).toBe('delivery-1');
    expect(() => idempotencyKeyOf({ 'idempotency-key': 'e'.repeat(4000) })).toThrow();
    expect(requestKeyOf({}, 'github', undefined)).toBeUndefined();
  });

  it('dedupes a signed delivery on its id whatever key the request names, and on whichever sub-path it arrives', () => {
    const signed = { webhookId: 'msg_1', scheme: 'standard-webhooks' };
    const bare = requestKeyOf({}, 'billing', signed);
    expect(bare).toEqual({ scope: 'signed standard-webhooks', key: 'msg_1', deliveryId: true });
    expect(requestKeyOf({ 'idempotency-key': 'a1' }, 'billing', signed)).toEqual(bare);
    expect(requestKeyOf({ 'x-service-idempotency-key': 'a3' }, 'billing/else', signed)).toEqual(bare);
    // A token holder's own key is scoped by its sub-path: never the scope of a signed delivery,
    // whatever the sub-path is called.
    expect(requestKeyOf({ 'idempotency-key': 'msg_1' }, 'signed standard-webhooks', undefined)?.scope).not.toBe(
      bare?.scope,
    );
  });
});

describe('in-flight keys over a store that answers later', () => {
  const slowSink = (answer: () => Promise<IdempotentAnswer | undefined>) =>
    ({ findAnswer: answer }) as unknown as ActionSink;

  it('takes the key before the look-up: a repeat arriving meanwhile is in flight', async () => {
    const keys = createInFlightKeys();
    let resolve: (a: IdempotentAnswer | undefined) => void = () => undefined;
    const sink = slowSink(() => new Promise((r) => (resolve = r)));
    const first = keys.claim(sink, 'agent', 'k', 'h');
    await expect(keys.claim(sink, 'agent', 'k', 'h')).rejects.toMatchObject({ code: 'IDEMPOTENCY_IN_FLIGHT' });
    resolve(undefined);
    expect(await first).toBeUndefined();
    keys.release('agent', 'k');
    // Released: the next claim looks up again.
    const next = keys.claim(sink, 'agent', 'k', 'h');
    resolve({ bodyHash: 'h', status: 202, body: { ok: true } });
    expect(await next).toEqual({ bodyHash: 'h', status: 202, body: { ok: true } });
  });

  it('gives the key back when the look-up fails or finds an answer', async () => {
    const keys = createInFlightKeys();
    const failing = slowSink(async () => {
      throw new Error('store down');
    });
    await expect(keys.claim(failing, 'agent', 'k', 'h')).rejects.toThrow('store down');
    const remembered = slowSink(async () => ({ bodyHash: 'other', status: 202, body: null }));
    await expect(keys.claim(remembered, 'agent', 'k', 'h')).rejects.toMatchObject({ code: 'IDEMPOTENCY_CONFLICT' });
    const empty = slowSink(async () => undefined);
    expect(await keys.claim(empty, 'agent', 'k', 'h')).toBeUndefined();
  });

  it('tells a waiter (a replay) when the key is let go, at once when it is not held', async () => {
    const keys = createInFlightKeys();
    const empty = slowSink(async () => undefined);
    await keys.released('agent', 'k');
    expect(await keys.claim(empty, 'agent', 'k', 'h')).toBeUndefined();
    let woken = false;
    const waiting = keys.released('agent', 'k').then(() => {
      woken = true;
    });
    // Other keys are not the held one.
    await keys.released('agent', 'other');
    await keys.released('wake', 'k');
    expect(woken).toBe(false);
    keys.release('agent', 'k');
    await waiting;
    expect(woken).toBe(true);
    expect(await keys.claim(empty, 'agent', 'k', 'h')).toBeUndefined();
  });
});
