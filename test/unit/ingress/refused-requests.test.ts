import { createHmac } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { hookdError } from '../../../src/errors.js';
import { AUTH, createTestApp, type TestApp } from '../../helpers/app.js';
import { createManualClock, until } from '../../helpers/clock.js';

/** Refused requests in the request log (docs/runtime.md#request-log-and-replay). */

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

interface Row {
  id: string;
  path: string;
  url: string;
  client_address: string | null;
  mapping_id: string | null;
  status: number;
  code: string | null;
  reason: string | null;
  headers: string;
  credentials: string | null;
  body: Buffer;
  body_bytes: number;
  authenticated: number;
  body_whole: number;
  redacted: number;
  more_refused: number | null;
}

/** The rows of the request log, each with its body as kept (in the body log, src/store/sqlite/bodies.ts). */
const rows = (): Row[] => {
  const { store } = t as TestApp;
  const all = store.db.prepare('SELECT * FROM requests ORDER BY seq').all() as (Row & {
    body_at: number | null;
    body_len: number | null;
  })[];
  return all.map((row) =>
    row.body_at === null ? row : { ...row, body: store.bodies.read(row.body_at, row.body_len ?? 0) },
  );
};
const rowsOf = async (n: number) => {
  await until(() => rows().length >= n);
  return rows();
};

const GH_SECRET = 'gh-secret-refused';
const signed = {
  hooks: {
    mappings: [
      { id: 'gh', match: { path: 'github' }, verify: { scheme: 'github', secret: GH_SECRET }, textTemplate: 'x' },
    ],
  },
};
const sign = (raw: string) => `sha256=${createHmac('sha256', GH_SECRET).update(raw).digest('hex')}`;

describe('requests refused at the door, in the request log', () => {
  it('records a wrong token: time, client, path, code, reason and header names, never the body or the token', async () => {
    t = await createTestApp();
    const payload = JSON.stringify({ text: 'a body nobody authenticated' });
    const res = await t.app.inject({
      method: 'POST',
      url: '/hooks/wake?token=query-secret-0123456789',
      headers: {
        authorization: 'Bearer wrong-token-0123456789',
        'x-sender': 'probe',
        'content-type': 'application/json',
      },
      payload,
      remoteAddress: '198.51.100.7',
    });
    expect(res.statusCode).toBe(401);
    const [row] = await rowsOf(1);
    expect(row).toMatchObject({
      id: res.headers['x-request-id'],
      path: 'wake',
      url: '/hooks/wake',
      client_address: '198.51.100.7',
      status: 401,
      code: 'UNAUTHORIZED',
      reason: 'missing or invalid hook token',
      body_bytes: payload.length,
      authenticated: 0,
      body_whole: 0,
      more_refused: null,
    });
    expect(row?.body).toEqual(Buffer.alloc(0));
    // Header names only: a value a refused sender wrote is never kept.
    expect(JSON.parse(row?.headers as string)).toMatchObject({ authorization: '[masked]', 'x-sender': '' });
    expect(JSON.parse(row?.credentials as string)).toEqual({ authorization: { verified: false } });
    const stored = JSON.stringify(rows());
    expect(stored).not.toContain('wrong-token');
    expect(stored).not.toContain('query-secret');
    expect(stored).not.toContain('nobody authenticated');
    expect(stored).not.toContain('probe');
  });

  it('keeps header names only, the path cut at 256 characters and no query: 14 KB of header and 1.5 KB of query', async () => {
    t = await createTestApp(signed);
    const many = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`x-h${i}-${'n'.repeat(100)}`, 'v']));
    const sent = [
      { url: `/hooks/wake?q=${'x'.repeat(1500)}`, headers: { 'x-padding': 'v'.repeat(14_000) } },
      { url: `/hooks/github?q=${'x'.repeat(1500)}`, headers: { 'x-hub-signature-256': 'sha256=00' } },
      { url: `/hooks/wake/${'p'.repeat(400)}`, headers: {} },
      { url: '/hooks/github', headers: { 'x-hub-signature-256': 'sha256=00', ...many } },
    ];
    for (const { url, headers } of sent) {
      const res = await t.app.inject({ method: 'POST', url, headers, payload: '{"n":1}' });
      expect(res.statusCode).toBe(401);
    }
    const [padded, signedWithQuery, long, named] = await rowsOf(4);
    expect(padded).toMatchObject({ url: '/hooks/wake', path: 'wake' });
    expect(JSON.parse(padded?.headers as string)).toMatchObject({ 'x-padding': '' });
    expect(signedWithQuery).toMatchObject({ url: '/hooks/github', code: 'SIGNATURE_INVALID', mapping_id: 'gh' });
    expect(long?.url).toBe(`/hooks/wake/${'p'.repeat(256 - '/hooks/wake/'.length)}`);
    expect(long?.path).toBe(`wake/${'p'.repeat(251)}`);
    // At most 32 names, each cut at 64 characters.
    const names = Object.keys(JSON.parse(named?.headers as string));
    expect(names).toHaveLength(32);
    expect(Math.max(...names.map((n) => n.length))).toBe(64);
    for (const row of rows()) expect(row.headers.length + row.url.length).toBeLessThan(2600);
  });

  it("gives a refused request an id of hookd's own when its sender chose one, in its record and its answer", async () => {
    t = await createTestApp(signed);
    const chosen = { 'x-request-id': 'the-senders-id' };
    const accepted = await t.app.inject({
      method: 'POST',
      url: '/hooks/wake',
      headers: { ...AUTH, ...chosen },
      payload: {},
    });
    expect(accepted.headers['x-request-id']).toBe('the-senders-id');
    const refusedAtTheGate = await t.app.inject({ method: 'POST', url: '/hooks/wake', headers: chosen, payload: {} });
    const badSignature = await t.app.inject({
      method: 'POST',
      url: '/hooks/github',
      headers: { ...chosen, 'x-hub-signature-256': 'sha256=00' },
      payload: {},
    });
    expect([refusedAtTheGate.statusCode, badSignature.statusCode]).toEqual([401, 401]);
    const ids = [refusedAtTheGate, badSignature].map((res) => res.headers['x-request-id']);
    expect(ids).not.toContain('the-senders-id');
    const all = await rowsOf(3);
    expect(all.map((row) => [row.id, row.authenticated])).toEqual([
      ['the-senders-id', 1],
      [ids[0], 0],
      [ids[1], 0],
    ]);
    expect(t.store.requests.get('the-senders-id')?.authenticated).toBe(true);
  });

  it('records 405, 404, 413, 415, 429 and SIGNATURE_INVALID with the mapping whose signature failed', async () => {
    t = await createTestApp({ hooks: { ...signed.hooks, maxBodyBytes: 64 } });
    const post = (url: string, headers: Record<string, string>, payload = '{}', method: 'POST' | 'GET' = 'POST') =>
      (t as TestApp).app.inject({ method, url, headers: { 'content-type': 'application/json', ...headers }, payload });
    expect((await post('/hooks/wake', AUTH, '', 'GET')).statusCode).toBe(405);
    expect((await post('/hooks/', AUTH)).statusCode).toBe(404);
    expect((await post('/hooks/github', {}, JSON.stringify({ pad: 'x'.repeat(100) }))).statusCode).toBe(413);
    expect((await post('/hooks/github', { 'content-type': 'image/png' })).statusCode).toBe(415);
    const bad = await post('/hooks/github', { 'x-hub-signature-256': sign('{"other":1}') }, '{"a":1}');
    expect(bad.json().code).toBe('SIGNATURE_INVALID');
    for (let i = 0; i < 20; i++) await post('/hooks/wake', { authorization: 'Bearer nope-0123456789' });
    expect((await post('/hooks/wake', { authorization: 'Bearer nope-0123456789' })).statusCode).toBe(429);
    const all = await rowsOf(26);
    const summary = all.map((r) => [r.status, r.code, r.path, r.mapping_id]);
    expect(summary.slice(0, 5)).toEqual([
      [405, 'METHOD_NOT_ALLOWED', 'wake', null],
      [404, 'NOT_FOUND', '', null],
      [413, 'PAYLOAD_TOO_LARGE', 'github', null],
      [415, 'UNSUPPORTED_MEDIA_TYPE', 'github', null],
      [401, 'SIGNATURE_INVALID', 'github', 'gh'],
    ]);
    expect(all.at(-1)).toMatchObject({ status: 429, code: 'TOO_MANY_AUTH_FAILURES' });
    expect(all[4]?.reason).toBe(
      'invalid webhook signature: no signature matched (is the secret the same on both sides?)',
    );
    expect(JSON.parse(all[4]?.credentials as string)).toEqual({ 'x-hub-signature-256': { verified: false } });
    // Whatever was refused, no body was kept.
    expect(all.every((r) => r.body.length === 0 && r.body_whole === 0)).toBe(true);
  });

  it('keeps refusedPerMinute records per client a minute, then one record of the rest when the minute ends', async () => {
    const clock = createManualClock(Date.UTC(2030, 0, 1, 12, 0, 10));
    t = await createTestApp({ hooks: { log: { refusedPerMinute: 5 } } }, { clock });
    const refuse = (remoteAddress: string) =>
      (t as TestApp).app.inject({
        method: 'POST',
        url: '/hooks/wake',
        headers: { authorization: 'Bearer nope-0123456789' },
        payload: {},
        remoteAddress,
      });
    for (let i = 0; i < 30; i++) await refuse('203.0.113.9');
    for (let i = 0; i < 3; i++) await refuse('203.0.113.10');
    await until(() => rows().length === 8);
    await clock.advance(50_000);
    const all = await rowsOf(9);
    expect(all.filter((r) => r.client_address === '203.0.113.9' && r.more_refused === null)).toHaveLength(5);
    expect(all.filter((r) => r.client_address === '203.0.113.10')).toHaveLength(3);
    expect(all.at(-1)).toMatchObject({
      client_address: '203.0.113.9',
      more_refused: 25,
      // The answer given most: 20 failures, then the lock's 429s.
      status: 401,
      code: 'UNAUTHORIZED',
      reason:
        '25 more refused from 203.0.113.9 in this minute (401 UNAUTHORIZED × 15, 429 TOO_MANY_AUTH_FAILURES × 10)',
    });
    // A new minute: the address has its records again.
    await refuse('203.0.113.9');
    await rowsOf(10);
  });

  it('records nothing refused with refusedPerMinute 0, and nothing at all with the log off', async () => {
    for (const log of [{ refusedPerMinute: 0 }, { enabled: false }]) {
      t = await createTestApp({ hooks: { log } });
      await t.app.inject({ method: 'POST', url: '/hooks/wake', headers: { authorization: 'Bearer no' }, payload: {} });
      // An authenticated request after it: once its record is there, the refused one would be too.
      await t.app.inject({ method: 'POST', url: '/hooks/wake', headers: AUTH, payload: { text: '' } });
      if (log.enabled === false) expect(rows()).toEqual([]);
      else expect((await rowsOf(1)).map((r) => r.status)).toEqual([400]);
      await t.close();
      t = undefined;
    }
  });
});

describe('what an authenticated request keeps of its body', () => {
  it('keeps an invalid JSON body raw, cut at maxBodyBytes; not at all while redaction is configured', async () => {
    t = await createTestApp({ hooks: { log: { maxBodyBytes: 10 } } });
    const res = await t.app.inject({ method: 'POST', url: '/hooks/wake', headers: AUTH, payload: '{"text": "hi",,}' });
    expect(res.json().code).toBe('INVALID_JSON');
    expect((await rowsOf(1))[0]).toMatchObject({
      status: 400,
      code: 'INVALID_JSON',
      body: Buffer.from('{"text": "'),
      body_bytes: 16,
      authenticated: 1,
      body_whole: 0,
    });
    await t.close();
    t = await createTestApp({ hooks: { log: { redact: ['card.number'] } } });
    await t.app.inject({ method: 'POST', url: '/hooks/wake', headers: AUTH, payload: '{"card": {"number": "4242"' });
    expect((await rowsOf(1))[0]).toMatchObject({ body: Buffer.alloc(0), body_bytes: 26, redacted: 1, body_whole: 0 });
  });

  it('never copies a piece of an invalid body into the answer or the reason: a redacted value stays out', async () => {
    // V8's message quoted the text around the error: `…"password":hunter2sec"... is not valid JSON`.
    t = await createTestApp({ hooks: { log: { redact: ['password'] } } });
    const payload = '{"text":"x","password":hunter2secret}';
    const res = await t.app.inject({ method: 'POST', url: '/hooks/wake', headers: AUTH, payload });
    const [row] = await rowsOf(1);
    // No four characters of the secret in a row, in the answer or anywhere in the stored record.
    const pieces = Array.from({ length: 'hunter2secret'.length - 3 }, (_, i) => 'hunter2secret'.slice(i, i + 4));
    for (const seen of [res.body, JSON.stringify(row)]) {
      expect(pieces.filter((piece) => seen.includes(piece))).toEqual([]);
    }
    const reason = 'invalid JSON body: unexpected character at line 1, column 24';
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ ok: false, code: 'INVALID_JSON', error: reason });
    expect(row).toMatchObject({ code: 'INVALID_JSON', reason, body: Buffer.alloc(0), redacted: 1 });
  });

  it('redacts a path as the parser sees the body, and never keeps raw text a duplicate key hid it in', async () => {
    t = await createTestApp({ hooks: { log: { redact: ['card.number'] } } });
    const bodies = [
      '{"text":"a","card":{"number":"4111111111111111"},"card":1}',
      '{"text":"b","card":1,"card":{"number":"4111111111111111"}}',
    ];
    for (const payload of bodies) {
      const res = await t.app.inject({ method: 'POST', url: '/hooks/wake', headers: AUTH, payload });
      expect(res.statusCode).toBe(200);
    }
    const [shadowed, kept] = await rowsOf(2);
    expect(shadowed?.body.toString()).toBe('{"text":"a","card":1}');
    expect(kept?.body.toString()).toBe('{"text":"b","card":{"number":"[redacted]"}}');
    for (const row of [shadowed, kept]) expect(row).toMatchObject({ redacted: 1, body_whole: 0 });
  });

  it('checks a signature before parsing: invalid JSON is 400 with its body for a signed sender, 401 for anyone else', async () => {
    t = await createTestApp(signed);
    const raw = '{"broken":';
    const headers = { 'content-type': 'application/json' };
    const unsigned = await t.app.inject({ method: 'POST', url: '/hooks/github', headers, payload: raw });
    expect(unsigned.json().code).toBe('SIGNATURE_INVALID');
    const ok = { ...headers, 'x-hub-signature-256': sign(raw) };
    const bad = await t.app.inject({ method: 'POST', url: '/hooks/github', headers: ok, payload: raw });
    expect(bad.json().code).toBe('INVALID_JSON');
    const [refused, kept] = await rowsOf(2);
    expect(refused).toMatchObject({ status: 401, authenticated: 0, body: Buffer.alloc(0) });
    expect(kept).toMatchObject({ status: 400, authenticated: 1, body: Buffer.from(raw), body_whole: 1 });
    expect(JSON.parse(kept?.credentials as string)).toEqual({ 'x-hub-signature-256': { verified: true } });
  });

  it('keeps no body of a request answered 503 (a full queue)', async () => {
    const full = () => {
      throw hookdError('QUEUE_FULL');
    };
    t = await createTestApp({}, { sink: { admit: full } });
    const payload = JSON.stringify({ message: 'm'.repeat(2000) });
    const res = await t.app.inject({ method: 'POST', url: '/hooks/agent', headers: AUTH, payload });
    expect(res.statusCode).toBe(503);
    expect((await rowsOf(1))[0]).toMatchObject({
      status: 503,
      code: 'QUEUE_FULL',
      authenticated: 1,
      body: Buffer.alloc(0),
      body_bytes: payload.length,
      body_whole: 0,
    });
  });
});
