import { createHmac } from 'node:crypto';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AUTH, createTestApp, type TestApp } from '../../helpers/app.js';
import { ROOT } from '../../helpers/hookd-process.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const count = (table: string) => {
  if (!t) throw new Error('no app');
  return (t.store.db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
};

describe('idempotency (DESIGN §10)', () => {
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

  it('expires records after ttlSeconds and purges them', () => {
    // The repository decides expiry by the time it is asked about.
    return (async () => {
      t = await createTestApp();
      const repo = t.store.idempotency;
      repo.put({ scope: 's', key: 'k', bodyHash: 'h', status: 200, response: '{}', createdAt: 1000, expiresAt: 2000 });
      expect(repo.get('s', 'k', 1999)).toBeDefined();
      expect(repo.get('s', 'k', 2000)).toBeUndefined();
      expect(repo.purge(2000)).toBe(1);
    })();
  });
});

describe('signatures on mappings (DESIGN §10)', () => {
  const secret = 'gh-secret-123';
  const sign = (raw: string) => `sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`;
  const github = {
    hooks: {
      mappings: [
        { id: 'open', match: { path: 'github', source: 'other' }, messageTemplate: 'unverified' },
        { id: 'gh', match: { path: 'github' }, verify: { scheme: 'github', secret }, messageTemplate: '{{action}}' },
        {
          id: 'slack',
          match: { path: 'slack' },
          verify: { scheme: 'slack', secret: 'slack-secret' },
          action: 'wake',
          textTemplate: '{{event.text}}',
        },
      ],
    },
  };

  it('accepts a valid signature instead of the token, and dedupes on X-GitHub-Delivery', async () => {
    t = await createTestApp(github);
    const raw = '{"action":"opened"}';
    const headers = {
      'content-type': 'application/json',
      'x-hub-signature-256': sign(raw),
      'x-github-delivery': 'delivery-1',
    };
    const first = await t.app.inject({ method: 'POST', url: '/hooks/github', headers, payload: raw });
    expect(first.statusCode).toBe(202);
    const redelivered = await t.app.inject({ method: 'POST', url: '/hooks/github', headers, payload: raw });
    expect(redelivered.headers['idempotent-replayed']).toBe('true');
    expect(count('runs')).toBe(1);
  });

  it('answers 401 to a bad or missing signature without a token, and counts it toward the lock', async () => {
    t = await createTestApp(github);
    const raw = '{"action":"opened"}';
    const bad = await t.app.inject({
      method: 'POST',
      url: '/hooks/github',
      headers: { 'content-type': 'application/json', 'x-hub-signature-256': 'sha256=00' },
      payload: raw,
    });
    expect(bad.statusCode).toBe(401);
    expect(bad.body).not.toContain(sign(raw).slice(7));
    for (let i = 0; i < 19; i++) {
      await t.app.inject({
        method: 'POST',
        url: '/hooks/github',
        headers: { 'content-type': 'application/json' },
        payload: raw,
      });
    }
    const locked = await t.app.inject({
      method: 'POST',
      url: '/hooks/github',
      headers: { 'content-type': 'application/json', 'x-hub-signature-256': sign(raw) },
      payload: raw,
    });
    expect(locked.statusCode).toBe(429);
    const token = await t.app.inject({
      method: 'POST',
      url: '/hooks/github',
      headers: AUTH,
      payload: { action: 'with token' },
    });
    expect(token.statusCode).toBe(202);
  });

  it('does not let a signature for one mapping reach another', async () => {
    t = await createTestApp(github);
    const raw = '{"source":"other"}';
    const res = await t.app.inject({
      method: 'POST',
      url: '/hooks/github',
      headers: { 'content-type': 'application/json', 'x-hub-signature-256': sign(raw) },
      payload: raw,
    });
    expect(res.statusCode).toBe(401);
  });

  it('echoes Slack url_verification challenges once the signature holds', async () => {
    t = await createTestApp(github);
    const raw = '{"type":"url_verification","challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P"}';
    const ts = String(Math.floor(Date.now() / 1000));
    const signature = `v0=${createHmac('sha256', 'slack-secret').update(`v0:${ts}:${raw}`).digest('hex')}`;
    const res = await t.app.inject({
      method: 'POST',
      url: '/hooks/slack',
      headers: { 'content-type': 'application/json', 'x-slack-signature': signature, 'x-slack-request-timestamp': ts },
      payload: raw,
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P' });
    expect(count('events')).toBe(0);
  });
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

describe('credentials never reach templates or transforms', () => {
  it('renders the token headers and ?token= empty', async () => {
    t = await createTestApp({
      hooks: {
        mappings: [
          {
            match: { path: 'leak' },
            action: 'wake',
            textTemplate: '[{{headers.authorization}}|{{headers.x-service-token}}|{{query.token}}|{{query.keep}}]',
          },
        ],
      },
    });
    const viaHeader = await t.app.inject({ method: 'POST', url: '/hooks/leak?keep=1', headers: AUTH, payload: {} });
    const viaQuery = await t.app.inject({
      method: 'POST',
      url: `/hooks/leak?token=${AUTH.authorization.slice(7)}&keep=2`,
      payload: {},
    });
    const texts = [viaHeader, viaQuery].map((r) => t?.store.events.get(r.json().eventId)?.text);
    expect(texts).toEqual(['[|||1]', '[|||2]']);
  });
});

describe('a request shares one transform time budget', () => {
  it('stops a fan-out of slow transform calls once their sum passes timeoutMs', async () => {
    t = await createTestApp({
      hooks: {
        transformsDir: join(ROOT, 'test/fixtures/transforms'),
        transforms: { timeoutMs: 200 },
        mappings: [
          {
            match: { path: 'loop' },
            forEach: 'items',
            messageTemplate: 'item {{items.0}}',
            transform: { module: 'hostile.ts', export: 'slow' },
          },
        ],
      },
    });
    const started = performance.now();
    const res = await t.app.inject({
      method: 'POST',
      url: '/hooks/loop',
      headers: AUTH,
      payload: { items: [1, 2, 3, 4, 5] },
    });
    expect(res.statusCode).toBe(500);
    expect(res.json().code).toBe('TRANSFORM_FAILED');
    expect(performance.now() - started).toBeLessThan(450);
    const fine = await t.app.inject({ method: 'POST', url: '/hooks/loop', headers: AUTH, payload: { items: [1] } });
    expect(fine.statusCode).toBe(202);
  });
});
