import { once } from 'node:events';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HookdProcess, startHookd } from '../helpers/hookd-process.js';
import { call } from '../helpers/http.js';

const TOKEN = 'e2e-hook-token-0123456789';
const BEARER = { authorization: `Bearer ${TOKEN}` };
const LIMIT = 4096;

let hookd: HookdProcess;
beforeAll(async () => {
  hookd = await startHookd({ config: { hooks: { enabled: true, token: TOKEN, maxBodyBytes: LIMIT } } });
});
afterAll(() => hookd?.stop());

const url = (path: string) => `${hookd.url}${path}`;

/**
 * Sends a raw HTTP request: `head`, then `chunks` body pieces (each framed as an HTTP/1.1
 * chunk when `chunked`), and returns the server's answer once it is complete (or, with `untilClosed`, all it
 * answered until it closed the connection).
 */
function raw(
  head: string,
  body: string,
  options: { chunks?: number; chunked?: boolean; untilClosed?: boolean } = {},
): Promise<string> {
  const { port } = new URL(hookd.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1');
    let answer = '';
    socket.on('data', (c) => {
      answer += c.toString();
      const [head = '', body = ''] = answer.split('\r\n\r\n');
      const length = /content-length: (\d+)/i.exec(head);
      if (!options.untilClosed && length && Buffer.byteLength(body) >= Number(length[1])) {
        resolve(answer);
        socket.destroy();
      }
    });
    socket.on('error', (err) => (answer ? resolve(answer) : reject(err)));
    socket.on('close', () => resolve(answer));
    socket.write(head + body);
    let sent = 0;
    const piece = Buffer.alloc(16384, 'a');
    const frame = options.chunked ? Buffer.concat([Buffer.from('4000\r\n'), piece, Buffer.from('\r\n')]) : piece;
    const pump = () => {
      if (sent >= (options.chunks ?? 0) || socket.destroyed) {
        if (options.chunked && !socket.destroyed) socket.write('0\r\n\r\n');
        return;
      }
      sent++;
      socket.write(frame, pump);
    };
    pump();
  });
}

describe('the HTTP contract over real sockets (docs/http.md, docs/security.md#tokens)', () => {
  it('answers 404 with a coded JSON body outside hooks.path', async () => {
    const res = await call(url('/elsewhere'), { headers: BEARER, json: {} });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ ok: false, error: 'not found', code: 'NOT_FOUND' });
    expect(res.headers['x-request-id']).toBeTruthy();
  });

  it('answers 405 with Allow: POST before checking the token', async () => {
    for (const method of ['GET', 'PUT', 'DELETE', 'PATCH']) {
      const res = await call(url('/hooks/wake'), { method });
      expect(res.status).toBe(405);
      expect(res.headers.allow).toBe('POST');
      expect(res.body.code).toBe('METHOD_NOT_ALLOWED');
    }
  });

  it('answers 401 without a token and with a wrong one', async () => {
    const none = await call(url('/hooks/wake'), { json: { text: 'x' } });
    expect(none.status).toBe(401);
    expect(none.body).toMatchObject({ ok: false, code: 'UNAUTHORIZED' });
    const wrong = await call(url('/hooks/wake'), { headers: { authorization: 'Bearer nope' }, json: { text: 'x' } });
    expect(wrong.status).toBe(401);
    const wrongHeader = await call(url('/hooks/wake'), {
      headers: { 'x-service-token': `${TOKEN}x` },
      json: { text: 'x' },
    });
    expect(wrongHeader.status).toBe(401);
  });

  it('accepts the Bearer header (any scheme case) and x-service-token', async () => {
    const bearer = await call(url('/hooks/wake'), {
      headers: { authorization: `bearer ${TOKEN}` },
      json: { text: 'a' },
    });
    expect(bearer.status).toBe(200);
    expect(bearer.headers.deprecation).toBeUndefined();
    const header = await call(url('/hooks/wake'), { headers: { 'x-service-token': TOKEN }, json: { text: 'b' } });
    expect(header.status).toBe(200);
  });

  it('accepts ?token= with Deprecation: true and a logged warning that never holds the token', async () => {
    const res = await call(url(`/hooks/wake?token=${TOKEN}`), { json: { text: 'query token' } });
    expect(res.status).toBe(200);
    expect(res.headers.deprecation).toBe('true');
    await expect.poll(() => hookd.stdout()).toMatch(/query parameter is deprecated/);
    expect(hookd.stdout()).not.toContain(TOKEN);
    expect(hookd.stderr()).not.toContain(TOKEN);
  });

  it('answers 404 for the empty sub-path and for unknown names, after auth', async () => {
    for (const path of ['/hooks', '/hooks/']) {
      const res = await call(url(path), { headers: BEARER, json: {} });
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('NOT_FOUND');
    }
    const unknown = await call(url('/hooks/nothing-here'), { headers: BEARER, json: {} });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ code: 'NO_MAPPING', error: 'no mapping for hook: nothing-here' });
    const unauthenticated = await call(url('/hooks'), { json: {} });
    expect(unauthenticated.status).toBe(401);
  });

  it('answers 415 for an unsupported content type', async () => {
    const res = await call(url('/hooks/wake'), {
      headers: { ...BEARER, 'content-type': 'application/xml' },
      body: '<x/>',
    });
    expect(res.status).toBe(415);
    expect(res.body.code).toBe('UNSUPPORTED_MEDIA_TYPE');
  });

  it('answers 413 from Content-Length before reading the body', async () => {
    const res = await call(url('/hooks/wake'), { headers: BEARER, json: { text: 'x'.repeat(LIMIT * 2) } });
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ ok: false, code: 'PAYLOAD_TOO_LARGE' });
  });

  it('answers 413 to a lying Content-Length without waiting for the body', async () => {
    const answer = await raw(
      `POST /hooks/wake HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 10000000\r\nConnection: close\r\n\r\n`,
      '{"text":"tiny"}',
    );
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer).toContain('"code":"PAYLOAD_TOO_LARGE"');
  });

  it('answers 413 to a chunked body while streaming, and the client receives it', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(
        url('/hooks/wake'),
        { method: 'POST', headers: { ...BEARER, 'content-type': 'application/json', 'transfer-encoding': 'chunked' } },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      let sent = 0;
      const write = () => {
        while (sent < 1024 * 1024) {
          sent += 8192;
          if (!req.write(`${'x'.repeat(8192)}`)) return req.once('drain', write);
        }
        req.end();
      };
      req.write('{"text":"');
      write();
    });
    expect(status).toBe(413);
  });

  it('answers 413 over a raw socket while the client goes on sending 8 MB of chunks, without a reset', async () => {
    const answer = await raw(
      `POST /hooks/wake HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n`,
      '',
      { chunks: 512, chunked: true },
    );
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer).toContain('"code":"PAYLOAD_TOO_LARGE"');
  });

  it('answers 400 for invalid JSON and for a body that is not an object', async () => {
    const bad = await call(url('/hooks/wake'), {
      headers: { ...BEARER, 'content-type': 'application/json' },
      body: '{"text":',
    });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('INVALID_JSON');
    for (const body of ['[1,2]', '"text"', '42', 'null']) {
      const res = await call(url('/hooks/wake'), { headers: { ...BEARER, 'content-type': 'application/json' }, body });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'INVALID_BODY', error: 'body must be a JSON object' });
    }
  });

  it('parses text/plain, +json and a missing content type as JSON; an empty body is {}', async () => {
    for (const type of ['text/plain', 'application/vnd.github+json', undefined]) {
      const headers: Record<string, string> = { ...BEARER, ...(type ? { 'content-type': type } : {}) };
      const res = await call(url('/hooks/wake'), { headers, body: JSON.stringify({ text: `as ${type}` }) });
      expect(res.status).toBe(200);
    }
    const empty = await call(url('/hooks/wake'), { headers: BEARER });
    expect(empty.status).toBe(400);
    expect(empty.body.code).toBe('TEXT_REQUIRED');
  });

  it('parses form-urlencoded bodies into an object of strings', async () => {
    const res = await call(url('/hooks/wake'), {
      headers: { ...BEARER, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'text=from+a+form&mode=next-heartbeat',
    });
    expect(res.status).toBe(200);
    expect(res.body.mode).toBe('next-heartbeat');
  });

  it('answers 200 for wake and 202 for agent, committed to SQLite before the answer', async () => {
    const wake = await call(url('/hooks/wake'), { headers: BEARER, json: { text: 'disk full on nas' } });
    expect(wake.status).toBe(200);
    expect(wake.body).toEqual({ ok: true, mode: 'now', eventId: expect.any(String) });
    const agent = await call(url('/hooks/agent'), { headers: BEARER, json: { message: 'triage this', name: 'Ops' } });
    expect(agent.status).toBe(202);
    expect(agent.body).toEqual({ ok: true, runId: expect.any(String), sessionKey: expect.stringMatching(/^hook:/) });

    const db = new Database(`${hookd.dir}/data/hookd.db`, { readonly: true });
    try {
      expect(db.prepare('SELECT text FROM events WHERE id = ?').get(wake.body.eventId)).toEqual({
        text: 'disk full on nas',
      });
      expect(db.prepare('SELECT name, message FROM runs WHERE id = ?').get(agent.body.runId)).toEqual({
        name: 'Ops',
        message: 'triage this',
      });
    } finally {
      db.close();
    }
  });

  it('echoes a sane x-request-id and makes one otherwise', async () => {
    const echoed = await call(url('/hooks/wake'), {
      headers: { ...BEARER, 'x-request-id': 'abc-123' },
      json: { text: 'x' },
    });
    expect(echoed.headers['x-request-id']).toBe('abc-123');
    const replaced = await call(url('/hooks/wake'), {
      headers: { ...BEARER, 'x-request-id': 'bad id\twith tabs' },
      json: { text: 'x' },
    });
    expect(replaced.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('answers 429 with Retry-After after 20 failures from one address, but never to the right token', async () => {
    // A separate client address (127.0.0.2) keeps this test's lock away from the other tests.
    const from = (headers: Record<string, string>) =>
      new Promise<{ status: number; retryAfter?: string }>((resolve, reject) => {
        const req = httpRequest(
          url('/hooks/wake'),
          { method: 'POST', localAddress: '127.0.0.2', headers: { 'content-type': 'application/json', ...headers } },
          (res) => {
            res.resume();
            resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'] as string | undefined });
          },
        );
        req.on('error', reject);
        req.end('{"text":"x"}');
      });
    for (let i = 0; i < 20; i++) expect((await from({ authorization: 'Bearer wrong' })).status).toBe(401);
    const locked = await from({ authorization: 'Bearer wrong' });
    expect(locked.status).toBe(429);
    expect(Number(locked.retryAfter)).toBeGreaterThan(0);
    expect((await from({})).status).toBe(429);
    expect((await from(BEARER)).status).toBe(200);
    // The right token erased nothing: the address stays locked.
    expect((await from({ authorization: 'Bearer wrong' })).status).toBe(429);
  });

  it('answers GET /healthz, with no breaker holding tries back', async () => {
    const res = await call(url('/healthz'), { method: 'GET' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true, breakers: [] });
  });
});

describe('hooks.allowQueryToken: false', () => {
  it('answers 400 to a ?token= request', async () => {
    const strict = await startHookd({ config: { hooks: { enabled: true, token: TOKEN, allowQueryToken: false } } });
    try {
      const res = await call(`${strict.url}/hooks/wake?token=${TOKEN}`, { json: { text: 'x' } });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('QUERY_TOKEN_DISABLED');
      const bearer = await call(`${strict.url}/hooks/wake`, { headers: BEARER, json: { text: 'x' } });
      expect(bearer.status).toBe(200);
    } finally {
      await strict.stop();
    }
  });

  it.each([
    ['a malformed URL', 'POST /hooks/%zz HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n', 400, 'BAD_URL'],
    [
      'an Expect other than 100-continue',
      'POST /hooks/wake HTTP/1.1\r\nHost: x\r\nExpect: foo\r\nContent-Length: 0\r\n\r\n',
      417,
      'EXPECTATION_FAILED',
    ],
    ['TRACE', 'TRACE /hooks/wake HTTP/1.1\r\nHost: x\r\n\r\n', 405, 'METHOD_NOT_ALLOWED'],
    ['PROPFIND', 'PROPFIND /hooks/wake HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n', 405, 'METHOD_NOT_ALLOWED'],
    ['CONNECT', 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n', 405, 'METHOD_NOT_ALLOWED'],
  ])('answers %s as JSON with a code and x-request-id', async (_name, request, status, code) => {
    const answer = await raw(request, '');
    const [head = '', body = ''] = answer.split('\r\n\r\n');
    expect(head).toMatch(new RegExp(`^HTTP/1.1 ${status} `));
    expect(head).toMatch(/\r\nx-request-id: [\w-]+/i);
    expect(JSON.parse(body)).toMatchObject({ ok: false, code });
  });

  it.each([
    ['a CONNECT', 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n', 405],
    ['bytes that are not HTTP', 'HELLO THERE\r\n\r\n', 400],
  ])('lives on when the peer of %s resets its connection after the answer', async (_name, request, status) => {
    const { port } = new URL(hookd.url);
    const socket = connect(Number(port), '127.0.0.1');
    socket.on('error', () => undefined);
    socket.write(request);
    const [answer] = (await once(socket, 'data')) as [Buffer];
    expect(answer.toString('latin1')).toMatch(new RegExp(`^HTTP/1.1 ${status} `));
    // A reset (RST) while the gateway waits out its grace before destroying the connection.
    socket.resetAndDestroy();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await call(`${hookd.url}/hooks/wake`, { headers: BEARER, json: { text: 'still here' } })).status).toBe(200);
  });

  it('answers 400 at once for bytes that break the HTTP framing in the middle of a body', async () => {
    // A chunk whose extension never ends (20 KB): node's parser gives up inside the body.
    const head = `POST /hooks/wake HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`;
    const started = Date.now();
    const answer = await raw(head, `5;${'x'.repeat(20_000)}\r\n{"a":\r\n`, { untilClosed: true });
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(answer.split('\r\n\r\n')[1] ?? '')).toMatchObject({ code: 'INVALID_BODY' });
    // Before, nothing came back until the 30 s bound closed the connection.
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it('answers a committed request before the 400 for garbage that follows it on the same connection', async () => {
    const body = '{"text":"before the garbage"}';
    const wake = `POST /hooks/wake HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
    const answer = await raw(`${wake}GARBAGE / NOT-HTTP\r\n\r\n`, '', { untilClosed: true });
    const statuses = [...answer.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => m[1]);
    expect(statuses).toEqual(['200', '400']);
  });
});
