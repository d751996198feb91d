import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createBatchPoster, isBatchDelivered } from '../../../src/mail/batch-poster.js';

const body409 = (code: unknown, error = 'idempotency') => JSON.stringify({ ok: false, error, code });

describe('isBatchDelivered', () => {
  it('counts any 2xx as delivered', () => {
    for (const status of [200, 202, 204, 299]) expect(isBatchDelivered(status, '{"ok":true}')).toBe(true);
  });

  it('retries every answer that is neither 2xx nor 409', () => {
    for (const status of [301, 400, 401, 408, 413, 429, 500, 503]) expect(isBatchDelivered(status, '')).toBe(false);
  });

  it('retries a 409 whose code is IDEMPOTENCY_IN_FLIGHT', () => {
    expect(isBatchDelivered(409, body409('IDEMPOTENCY_IN_FLIGHT'))).toBe(false);
    expect(isBatchDelivered(409, '{ "ok": false, "code": "IDEMPOTENCY\\u005fIN_FLIGHT" }')).toBe(false);
  });

  it('counts a 409 with any other code as delivered under that key before', () => {
    expect(isBatchDelivered(409, body409('IDEMPOTENCY_CONFLICT'))).toBe(true);
    const mentionsInFlight = {
      ok: false,
      error: 'different body',
      code: 'IDEMPOTENCY_CONFLICT',
      was: 'IDEMPOTENCY_IN_FLIGHT',
    };
    expect(isBatchDelivered(409, JSON.stringify(mentionsInFlight))).toBe(true);
  });

  it('counts a 409 without a JSON body or a string code as delivered, like an unknown code', () => {
    for (const body of ['', 'Conflict', '<html>"IDEMPOTENCY_IN_FLIGHT"</html>', 'null', '[]', '{"ok":false}'])
      expect(isBatchDelivered(409, body)).toBe(true);
    expect(isBatchDelivered(409, body409(409))).toBe(true);
  });
});

type Answer = { status: number; body: string };

const servers: ReturnType<typeof createServer>[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
});

/** A hook that answers from `answers` in turn (the last one forever) and records each request. */
async function hook(answers: Answer[]) {
  const seen: { key: string; body: { historyId: string; messages: unknown[] } }[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    req.on('data', (c: Buffer) => {
      raw += c.toString();
    });
    req.on('end', () => {
      seen.push({ key: String(req.headers['idempotency-key']), body: JSON.parse(raw) });
      const answer = answers[Math.min(seen.length, answers.length) - 1] as Answer;
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/mail`, seen };
}

function poster(url: string, signal: AbortSignal, errors: string[]) {
  return createBatchPoster({
    account: 'me@example.com',
    mailbox: 'INBOX',
    hookUrl: url,
    hookToken: 'hook-token',
    backoff: { minMs: 1, maxMs: 1 },
    signal,
    log: pino({ level: 'silent' }),
    onError: (message) => errors.push(message),
  });
}

const batch = { uidValidity: '1700', firstUid: 3, lastUid: 5, messages: [] };

describe('createBatchPoster', () => {
  it('retries under the same key while the first post is in flight, then takes a conflict as delivered', async () => {
    const inFlight = { status: 409, body: body409('IDEMPOTENCY_IN_FLIGHT') };
    const { url, seen } = await hook([inFlight, inFlight, { status: 409, body: body409('IDEMPOTENCY_CONFLICT') }]);
    const errors: string[] = [];
    await poster(url, new AbortController().signal, errors).post(batch);
    expect(seen.map((s) => s.key)).toEqual(Array(3).fill('mail:me@example.com:INBOX:1700:3-5'));
    expect(seen[0]?.body).toMatchObject({ historyId: '5', messages: [] });
    expect(errors).toHaveLength(2);
    expect(errors[0]).toMatch(/^the hook answered 409: .*IDEMPOTENCY_IN_FLIGHT/);
  });

  it('rejects once stopped while the hook keeps failing', async () => {
    const { url, seen } = await hook([{ status: 500, body: '{"ok":false}' }]);
    const stopper = new AbortController();
    const posting = poster(url, stopper.signal, []).post(batch);
    await expect.poll(() => seen.length).toBeGreaterThan(1);
    stopper.abort();
    await expect(posting).rejects.toMatchObject({ code: 'SHUTTING_DOWN' });
  });
});
