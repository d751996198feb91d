import { once } from 'node:events';
import type { AddressInfo, Socket } from 'node:net';
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { AUTH, createTestApp, type TestApp } from '../../helpers/app.js';
import { call } from '../../helpers/http.js';

/**
 * A connection answered with a closing 4xx gives its slot in `server.maxConnections` back a
 * short grace after the answer, whether or not the peer ever closes its side
 * (docs/security.md#hostile-input).
 */

let t: TestApp | undefined;
const peers: Socket[] = [];
afterEach(async () => {
  for (const peer of peers.splice(0)) peer.destroy();
  await t?.close();
  t = undefined;
});

/** Generous: the machine is shared; the grace itself is 1 s. */
const FREED_WITHIN_MS = 15_000;

/** Listens on port 0 and keeps every server-side socket, to wait for each one's close. */
async function listen(app: TestApp['app']): Promise<{ port: number; serverSockets: Socket[] }> {
  const serverSockets: Socket[] = [];
  app.server.on('connection', (socket: Socket) => serverSockets.push(socket));
  await app.listen({ host: '127.0.0.1', port: 0 });
  return { port: (app.server.address() as AddressInfo).port, serverSockets };
}

/**
 * A peer that sends `bytes` and then nothing, and never closes its side (no FIN: half-open
 * allowed, so the server's FIN is not answered). Resolves with what it received once the
 * server has ended its side (or refused it at accept).
 */
function stubbornPeer(port: number, bytes: string): Promise<string> {
  const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
  peers.push(socket);
  let received = '';
  socket.on('data', (chunk: Buffer) => {
    received += chunk.toString('latin1');
  });
  socket.on('error', () => undefined);
  socket.write(bytes);
  return new Promise((resolve) => {
    socket.once('end', () => resolve(received));
    socket.once('close', () => resolve(received));
  });
}

/** Resolves once every server-side socket is closed; rejects past `ms` with how many are left. */
async function allClosed(sockets: readonly Socket[], ms: number): Promise<void> {
  const open = sockets.filter((s) => !s.destroyed);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      const left = sockets.filter((s) => !s.destroyed).length;
      reject(new Error(`${left} of ${sockets.length} connections still held after ${ms} ms`));
    }, ms);
  });
  try {
    await Promise.race([Promise.all(open.map((s) => once(s, 'close'))), late]);
  } finally {
    clearTimeout(timer);
  }
}

describe('connection slots after a closing answer', () => {
  it('frees the slots of 30 peers that never close after their 408, and answers a real sender', async () => {
    t = await createTestApp({ server: { maxConnections: 24, headersTimeoutMs: 1000 } });
    const { port, serverSockets } = await listen(t.app);
    const answers = await Promise.all(
      Array.from({ length: 30 }, () => stubbornPeer(port, 'POST /hooks/wake HTTP/1.1\r\nHost: x\r\n')),
    );
    // 24 held a slot until their headers ran out of time; the other 6 were refused at accept.
    expect(answers.filter((text) => text.startsWith('HTTP/1.1 408 '))).toHaveLength(24);
    expect(serverSockets).toHaveLength(24);
    await allClosed(serverSockets, FREED_WITHIN_MS);
    const sender = await call(`http://127.0.0.1:${port}/hooks/wake`, { headers: AUTH, json: { text: 'hello' } });
    expect(sender.status).toBe(200);
  });

  const signed = 'POST /hooks/github HTTP/1.1\r\nHost: x\r\nX-Hub-Signature-256: sha256=00\r\n';
  const close = 'Connection: close\r\n';
  const withToken = `POST /hooks/wake HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH.authorization}\r\n`;
  /** What 4 peers send, the answer each gets (`busy` of them a 503), and the pending bodies' bound per client. */
  interface Refusal {
    readonly name: string;
    readonly bytes: string;
    readonly answer: RegExp;
    readonly busy?: number;
    readonly perClient?: number;
  }
  const refusals: readonly Refusal[] = [
    { name: 'the 400 for bytes that are not HTTP', bytes: 'HELLO THERE\r\n\r\n', answer: /^HTTP\/1\.1 400 / },
    {
      name: 'the 417 of an Expect it cannot meet',
      bytes: 'POST /hooks/wake HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\nContent-Length: 2\r\n\r\n',
      answer: /^HTTP\/1\.1 417 /,
    },
    {
      name: 'the 405 of a CONNECT',
      bytes: 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n',
      answer: /^HTTP\/1\.1 405 /,
    },
    {
      name: 'a 401 whose client asked to close',
      bytes: `POST /hooks/wake HTTP/1.1\r\nHost: x\r\n${close}Content-Length: 2\r\n\r\n{}`,
      answer: /^HTTP\/1\.1 401 /,
    },
    {
      name: 'a 401 on a connection its client would keep',
      bytes: 'POST /hooks/wake HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}',
      answer: /^HTTP\/1\.1 401 /,
    },
    {
      name: 'a 401 of a request without a body, on a connection its client would keep',
      bytes: 'GET /hooks/wake HTTP/1.1\r\nHost: x\r\n\r\n',
      answer: /^HTTP\/1\.1 (401|405) /,
    },
    {
      name: 'a 413 whose body was drained and whose client asked to close',
      bytes: `${withToken}${close}Content-Length: 2000\r\n\r\n${'x'.repeat(2000)}`,
      answer: /^HTTP\/1\.1 413 /,
    },
    {
      name: 'a 415 whose body was drained and whose client asked to close',
      bytes: `${withToken}${close}Content-Type: image/png\r\nContent-Length: 4\r\n\r\nabcd`,
      answer: /^HTTP\/1\.1 415 /,
    },
    {
      name: 'a 413 whose body is cut off past 64 KiB',
      bytes: `${withToken}Content-Length: 200000\r\n\r\n${'x'.repeat(100_000)}`,
      answer: /^HTTP\/1\.1 413 /,
    },
    {
      name: 'the 415 of a tokenless body whose Content-Type cannot be parsed, before it was read',
      bytes: `${signed}Content-Type: nonsense\r\nContent-Length: 100\r\n\r\n{"n":`,
      answer: /^HTTP\/1\.1 415 /,
    },
    {
      name: 'the 408 of a tokenless body that a signature would authenticate',
      bytes: `${signed}Content-Length: 100\r\n\r\n{"n":`,
      answer: /^HTTP\/1\.1 408 /,
    },
    // One body is pending (its 408 comes at bodyTimeoutMs), the 3 others are past a bound.
    {
      name: 'the 503 of tokenless bodies past the pending count',
      bytes: `${signed}Content-Length: 100\r\n\r\n{"n":`,
      answer: /^HTTP\/1\.1 (503|408) /,
      busy: 3,
      perClient: 1,
    },
    {
      name: 'the 503 of tokenless chunked bodies that grow past the pending bytes',
      bytes: `${signed}Transfer-Encoding: chunked\r\n\r\n3e8\r\n${'x'.repeat(1000)}\r\n`,
      answer: /^HTTP\/1\.1 (503|408) /,
      busy: 3,
    },
  ];
  /** A mapping whose GitHub signature stands in for the token on /hooks/github. */
  const github = {
    id: 'gh',
    match: { path: 'github' },
    verify: { scheme: 'github', secret: 'connection-slots-secret' },
    action: 'wake',
    textTemplate: 'push',
  };

  it.each(refusals.map((r) => [r.name, r] as const))(
    'frees the slot of a peer that never closes after %s',
    async (_name, refusal) => {
      // Headers that never end would be cut at headersTimeoutMs: far later here, so that only
      // the close after the answer can free the slots in time.
      const server = { maxConnections: 4, headersTimeoutMs: 60_000, requestTimeoutMs: 60_000 };
      const verifiedPaths = { maxPendingBytes: 1024, bodyTimeoutMs: 500, maxPendingPerClient: refusal.perClient ?? 4 };
      t = await createTestApp({ server, hooks: { maxBodyBytes: 1024, mappings: [github], verifiedPaths } });
      const { port, serverSockets } = await listen(t.app);
      const answers = await Promise.all(Array.from({ length: 4 }, () => stubbornPeer(port, refusal.bytes)));
      for (const text of answers) expect(text).toMatch(refusal.answer);
      const busy = answers.filter((text) => text.startsWith('HTTP/1.1 503 '));
      expect(busy).toHaveLength(refusal.busy ?? 0);
      await allClosed(serverSockets, FREED_WITHIN_MS);
      const sender = await call(`http://127.0.0.1:${port}/hooks/wake`, { headers: AUTH, json: { text: 'hello' } });
      expect(sender.status).toBe(200);
    },
  );
});
