import { createHmac } from 'node:crypto';
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { AUTH, createTestApp, type TestApp } from '../../helpers/app.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const count = (table: string) => {
  if (!t) throw new Error('no app');
  return (t.store.db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
};

describe('signatures on mappings (docs/security.md#provider-signatures)', () => {
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
    // The sender learns what to fix (every failure once said "missing or invalid hook token").
    expect(bad.json()).toEqual({
      ok: false,
      code: 'SIGNATURE_INVALID',
      error: 'invalid webhook signature: no signature matched (is the secret the same on both sides?)',
    });
    const missing = await t.app.inject({
      method: 'POST',
      url: '/hooks/github',
      headers: { 'content-type': 'application/json' },
      payload: raw,
    });
    expect(missing.json()).toMatchObject({
      code: 'SIGNATURE_INVALID',
      error: 'invalid webhook signature: missing X-Hub-Signature-256',
    });
    for (let i = 0; i < 18; i++) {
      await t.app.inject({
        method: 'POST',
        url: '/hooks/github',
        headers: { 'content-type': 'application/json' },
        payload: raw,
      });
    }
    const post = (headers: Record<string, string>) =>
      t?.app.inject({ method: 'POST', url: '/hooks/github', headers, payload: raw });
    // The client is locked now: a bad signature is 429, but a valid signature and the token never are.
    expect((await post({ 'content-type': 'application/json', 'x-hub-signature-256': 'sha256=00' }))?.statusCode).toBe(
      429,
    );
    expect((await post({ 'content-type': 'application/json', 'x-hub-signature-256': sign(raw) }))?.statusCode).toBe(
      202,
    );
    expect((await post({ ...AUTH, 'content-type': 'application/json' }))?.statusCode).toBe(202);
  });

  it('lets no success erase earlier failures: a correct token between guesses does not reset the count', async () => {
    t = await createTestApp();
    const guess = () => t?.app.inject({ method: 'POST', url: '/hooks/wake', payload: { text: 'x' } });
    for (let i = 0; i < 19; i++) expect((await guess())?.statusCode).toBe(401);
    const right = await t.app.inject({ method: 'POST', url: '/hooks/wake', headers: AUTH, payload: { text: 'x' } });
    expect(right.statusCode).toBe(200);
    expect((await guess())?.statusCode).toBe(401);
    expect((await guess())?.statusCode).toBe(429);
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

describe('lingering close of a refused body', () => {
  it('does not hold up the server closing when the client stops sending after its 413', async () => {
    t = await createTestApp({ hooks: { maxBodyBytes: 4096 } });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = t.app.server.address() as { port: number };
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    socket.on('data', (chunk) => {
      answer += chunk.toString();
    });
    socket.on('error', () => undefined);
    // 300 KB announced, 10 KB sent, then nothing more: the client waits on its answer.
    socket.write(
      `POST /hooks/agent HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH.authorization}\r\n` +
        'Content-Type: application/json\r\nContent-Length: 300000\r\n\r\n',
    );
    socket.write('x'.repeat(10_000));
    await expect.poll(() => answer).toContain('413');
    const closing = Date.now();
    await t.close();
    t = undefined;
    // A close that waited for this client would wait for ever (it never sends the rest).
    expect(Date.now() - closing).toBeLessThan(10_000);
    socket.destroy();
  });
});

describe('the body of a refused request (docs/operations.md#limits)', () => {
  it('is read for at most 2 s after a 401, then the connection closes, however slowly it trickles', async () => {
    t = await createTestApp();
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = t.app.server.address() as { port: number };
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    socket.on('data', (chunk) => {
      answer += chunk.toString();
    });
    socket.on('error', () => undefined);
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.write(
      'POST /hooks/wake HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n',
    );
    const trickle = setInterval(() => socket.writable && socket.write('x'), 200);
    const started = Date.now();
    await closed;
    clearInterval(trickle);
    expect(answer).toMatch(/^HTTP\/1\.1 401 /);
    expect(Date.now() - started).toBeLessThan(6000);
  });
});
