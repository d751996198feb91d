import { createHmac } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { isHookdError } from '../../../src/errors.js';
import { AUTH, createTestApp, type TestApp } from '../../helpers/app.js';

// A body that only its signature can authenticate is read within
// hooks.verifiedPaths (docs/security.md#hostile-input); one with the hook token is not.

const SECRET = 'unverified-secret-123';
const sign = (raw: string) => `sha256=${createHmac('sha256', SECRET).update(raw).digest('hex')}`;
const githubMapping = {
  id: 'gh',
  match: { path: 'github' },
  verify: { scheme: 'github', secret: SECRET },
  action: 'wake',
  textTemplate: 'push {{n}}',
};

let t: TestApp | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await t?.close();
  t = undefined;
});

async function gateway(verifiedPaths: Record<string, number>, hooks: Record<string, unknown> = {}): Promise<number> {
  t = await createTestApp({ hooks: { mappings: [githubMapping], verifiedPaths, ...hooks } });
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  return (t.app.server.address() as { port: number }).port;
}

interface Upload {
  readonly socket: Socket;
  /** The whole answer, once the gateway has closed the connection. */
  readonly closed: Promise<string>;
  /** Whatever has arrived so far. */
  received(): string;
}

/** A POST to /hooks/github from `from` (a loopback address), over a socket of its own: `head` then `body`. */
function upload(port: number, from: string, head: Record<string, string>, body = ''): Upload {
  const socket = connect({ port, host: '127.0.0.1', localAddress: from });
  sockets.push(socket);
  let text = '';
  socket.on('data', (chunk: Buffer) => {
    text += chunk.toString('latin1');
  });
  socket.on('error', () => undefined);
  const closed = new Promise<string>((resolve) => socket.on('close', () => resolve(text)));
  const lines = Object.entries({ host: 'x', 'content-type': 'application/json', ...head }).map(
    ([k, v]) => `${k}: ${v}`,
  );
  socket.write(`POST /hooks/github HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n${body}`);
  return { socket, closed, received: () => text };
}

/** An upload that announces `length` bytes and sends 10: it stays pending until cut. */
const held = (port: number, from: string, length: number) =>
  upload(port, from, { 'content-length': String(length), 'x-hub-signature-256': 'sha256=00' }, '{"n":1,"x":');

/** A complete, correctly signed request from `from`: its status. */
async function signed(port: number, from: string, n: number): Promise<number> {
  const raw = JSON.stringify({ n });
  const sent = upload(port, from, {
    'content-length': String(raw.length),
    'x-hub-signature-256': sign(raw),
    connection: 'close',
  });
  sent.socket.write(raw);
  return Number((await sent.closed).split(' ')[1]);
}

/** The first of `uploads` the gateway answers and closes, and the others. */
async function firstClosed(uploads: Upload[]): Promise<{ answer: string; others: Upload[] }> {
  const first = await Promise.race(uploads.map((u) => u.closed.then((answer) => ({ u, answer }))));
  return { answer: first.answer, others: uploads.filter((u) => u !== first.u) };
}

describe('bodies read before their signature is checked', () => {
  it('answers 503 BUSY with Retry-After at once, unread, past maxPendingPerClient bodies of one address', async () => {
    const port = await gateway({ maxPendingPerClient: 2 });
    const { answer, others } = await firstClosed([1, 2, 3].map(() => held(port, '127.0.0.3', 100_000)));
    expect(answer).toMatch(/^HTTP\/1\.1 503 /);
    expect(answer).toMatch(/\r\nretry-after: 5\r\n/i);
    expect(answer).toMatch(/\r\nconnection: close\r\n/i);
    expect(answer).toContain(
      '{"ok":false,"error":"too many request bodies from this address are waiting for their signature check; retry later","code":"BUSY"}',
    );
    // The third was refused once the other two were pending: they wait for their bodies.
    expect(others.map((h) => h.received())).toEqual(['', '']);
    // Another address is served, and so is the hook token from the busy one.
    expect(await signed(port, '127.0.0.4', 1)).toBe(200);
    const withToken = upload(port, '127.0.0.3', { ...AUTH, 'content-length': '7', connection: 'close' }, '{"n":2}');
    expect(await withToken.closed).toMatch(/^HTTP\/1\.1 200 /);
  });

  it('answers 503 BUSY past maxPendingBytes across addresses, and takes bodies again once room is given back', async () => {
    const port = await gateway({ maxPendingBytes: 4096 }, { maxBodyBytes: 4096 });
    const { answer, others } = await firstClosed([held(port, '127.0.0.5', 3000), held(port, '127.0.0.6', 2500)]);
    expect(answer).toMatch(/^HTTP\/1\.1 503 [\s\S]*"code":"BUSY"/);
    // A chunked body has no length to reserve: it is refused as it passes the bound.
    const chunked = upload(port, '127.0.0.7', { 'transfer-encoding': 'chunked', 'x-hub-signature-256': 'sha256=00' });
    chunked.socket.write(`898\r\n${'x'.repeat(2200)}\r\n`);
    expect(await chunked.closed).toMatch(/^HTTP\/1\.1 503 [\s\S]*"code":"BUSY"/);
    for (const pending of others) pending.socket.destroy();
    await expect.poll(() => signed(port, '127.0.0.6', 3)).toBe(200);
  });

  it('gives a body’s room back as soon as its client goes away, not at its deadline', async () => {
    const port = await gateway({ maxPendingPerClient: 1 });
    const { answer, others } = await firstClosed([held(port, '127.0.0.9', 1000), held(port, '127.0.0.9', 1000)]);
    expect(answer).toMatch(/^HTTP\/1\.1 503 /);
    // Half-closed mid-body (FIN), the request can never finish.
    others[0]?.socket.end();
    await expect.poll(() => signed(port, '127.0.0.9', 5), { timeout: 2000 }).toBe(200);
  });

  it('answers 408 once bodyTimeoutMs has passed and closes the connection, but lets a token holder take longer', async () => {
    const port = await gateway({ bodyTimeoutMs: 1000 });
    const started = performance.now();
    const slow = held(port, '127.0.0.8', 1000);
    const answer = await slow.closed;
    const ms = performance.now() - started;
    expect(answer).toMatch(/^HTTP\/1\.1 408 [\s\S]*"code":"REQUEST_TIMEOUT"/);
    expect(ms).toBeGreaterThan(900);
    expect(ms).toBeLessThan(3000);
    // The token holder's body takes 1.5 s to arrive on the same path, and is read whole.
    const raw = '{"n":4}';
    const trickled = upload(port, '127.0.0.8', { ...AUTH, 'content-length': String(raw.length), connection: 'close' });
    for (const char of raw) {
      await new Promise((resolve) => setTimeout(resolve, 220));
      trickled.socket.write(char);
    }
    expect(await trickled.closed).toMatch(/^HTTP\/1\.1 200 /);
  });
});

describe('hooks.verifiedPaths.maxPendingBytes', () => {
  it('must hold the largest body a signature-checked path takes (hookd check fails otherwise)', async () => {
    const failure = await createTestApp({
      hooks: {
        mappings: [{ ...githubMapping, maxBodyBytes: 2_000_000 }],
        verifiedPaths: { maxPendingBytes: 1_000_000 },
      },
    }).then(
      (app) => app.close(),
      (err: unknown) => err,
    );
    expect(isHookdError(failure, 'CONFIG_INVALID')).toBe(true);
    expect(String((failure as Error).message)).toContain(
      'hooks.verifiedPaths.maxPendingBytes: expected at least 2000000, the body limit of hook github that hooks.mappings[0] verifies',
    );
  });
});
