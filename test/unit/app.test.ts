import { type AddressInfo, connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, HOOK_TOKEN, type TestApp } from '../helpers/app.js';

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

describe('server.allowedHosts (docs/security.md#dns-rebinding)', () => {
  const health = (host: string) => t?.app.inject({ method: 'GET', url: '/healthz', headers: { host } });
  it('answers the names it lists beside loopback ones, in any case and on any port', async () => {
    t = await createTestApp({
      server: { allowedHosts: ['Hooks.Example.com', 'gw.example:8443', 'fd00::2', 'dot.example.'] },
    });
    expect((await health('hooks.example.COM:443'))?.statusCode).toBe(200);
    expect((await health('gw.example:8443'))?.statusCode).toBe(200);
    expect((await health('[fd00::2]:8787'))?.statusCode).toBe(200);
    expect((await health('dot.example'))?.statusCode).toBe(200);
    expect((await health('127.0.0.9:8787'))?.statusCode).toBe(200);
    expect((await health('console.localhost'))?.statusCode).toBe(200);
    const other = await health('hooks.example.com.attacker.example');
    expect(other?.statusCode).toBe(421);
    expect(other?.json()).toMatchObject({
      code: 'HOST_NOT_ALLOWED',
      error: 'hooks.example.com.attacker.example is no name of this gateway: see server.allowedHosts',
    });
    expect((await health('127.0.0.1.attacker.example'))?.statusCode).toBe(421);
  });

  it('checks no name on a gateway listening beyond loopback with none listed', async () => {
    t = await createTestApp({ server: { host: '0.0.0.0' } });
    expect((await health('gateway.lan:8787'))?.statusCode).toBe(200);
  });
});

describe('server.trustProxy never takes a left-most X-Forwarded-For entry a client wrote (docs/security.md#deployment)', () => {
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

describe('connection bounds (docs/operations.md#limits)', () => {
  const open = async (app: NonNullable<typeof t>['app']) => {
    await app.listen({ host: '127.0.0.1', port: 0 });
    return (app.server.address() as AddressInfo).port;
  };
  /** Everything a connection receives until it closes. */
  const received = (socket: Socket) =>
    new Promise<string>((resolve) => {
      let data = '';
      socket.on('data', (chunk) => {
        data += chunk.toString();
      });
      socket.on('error', () => undefined);
      socket.on('close', () => resolve(data));
    });

  it('answers 408 as JSON and closes a connection whose headers never finish', async () => {
    t = await createTestApp({ server: { headersTimeoutMs: 1000 } });
    const socket = connect(await open(t.app), '127.0.0.1');
    const answer = received(socket);
    socket.write('POST /hooks/wake HTTP/1.1\r\nHost: localhost\r\n');
    const started = Date.now();
    const text = await answer;
    expect(Date.now() - started).toBeLessThan(5000);
    expect(text).toMatch(/^HTTP\/1\.1 408 /);
    expect(JSON.parse(text.split('\r\n\r\n')[1] ?? '')).toMatchObject({ code: 'REQUEST_TIMEOUT' });
  });

  it('answers 408 and closes a request with the right token whose body trickles past requestTimeoutMs', async () => {
    const logs: { level: number; msg: string }[] = [];
    t = await createTestApp({ server: { headersTimeoutMs: 1000, requestTimeoutMs: 1500 } }, { logs });
    const socket = connect(await open(t.app), '127.0.0.1');
    const answer = received(socket);
    socket.write(
      `POST /hooks/wake HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${HOOK_TOKEN}\r\n` +
        'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"text":"',
    );
    // A byte every 100 ms: each comes well within any idle timeout, the whole never ends.
    const trickle = setInterval(() => {
      if (!socket.destroyed) socket.write('x');
    }, 100);
    const started = Date.now();
    try {
      const text = await answer;
      expect(Date.now() - started).toBeLessThan(5000);
      expect(text).toMatch(/^HTTP\/1\.1 408 /);
      expect(JSON.parse(text.split('\r\n\r\n')[1] ?? '')).toMatchObject({ code: 'REQUEST_TIMEOUT' });
      // The body cut short is the sender's doing: no error line with a stack (a 500 before),
      // looked for once the server has let the connection go (its request ended then).
      const server = t.app.server;
      await expect.poll(() => new Promise<number>((resolve) => server.getConnections((_err, n) => resolve(n)))).toBe(0);
      expect(logs.filter((line) => line.level >= 50)).toEqual([]);
    } finally {
      clearInterval(trickle);
    }
  });

  it('refuses connections past server.maxConnections at accept', async () => {
    t = await createTestApp({ server: { maxConnections: 2 } });
    const port = await open(t.app);
    const held = [connect(port, '127.0.0.1'), connect(port, '127.0.0.1')];
    await Promise.all(held.map((s) => new Promise((resolve) => s.once('connect', resolve))));
    const third = connect(port, '127.0.0.1');
    const answer = received(third);
    third.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n');
    expect(await answer).toBe('');
    for (const socket of held) socket.destroy();
  });

  it("refuses one client's connections past server.maxConnectionsPerClient, and takes another's", async () => {
    const logs: { level: number; msg: string; client?: string }[] = [];
    t = await createTestApp({ server: { maxConnections: 10, maxConnectionsPerClient: 2 } }, { logs });
    const port = await open(t.app);
    // One address holds its share with connections that never send a byte.
    const held = [connect(port, '127.0.0.1'), connect(port, '127.0.0.1')];
    await Promise.all(held.map((s) => new Promise((resolve) => s.once('connect', resolve))));
    const third = connect(port, '127.0.0.1');
    const refused = received(third);
    third.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n');
    expect(await refused).toBe('');
    // Told at warn, naming the client (once a minute at most).
    expect(logs.filter((l) => l.msg === 'refused connections past server.maxConnectionsPerClient')).toEqual([
      expect.objectContaining({ level: 40, client: '127.0.0.1' }),
    ]);
    // Another client (another loopback address) is still answered.
    const other = connect({ port, host: '127.0.0.1', localAddress: '127.0.0.2' });
    const answered = received(other);
    other.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
    expect(await answered).toMatch(/^HTTP\/1\.1 200/);
    // A slot given back is taken again.
    held[0]?.destroy();
    await expect
      .poll(async () => {
        const again = connect(port, '127.0.0.1');
        const text = received(again);
        again.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
        return (await text).slice(0, 12);
      })
      .toBe('HTTP/1.1 200');
    for (const socket of held) socket.destroy();
  });
});
