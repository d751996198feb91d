import { request as httpRequest } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type HookdProcess, startHookd } from '../helpers/hookd-process.js';
import { call, until } from '../helpers/http.js';
import { type SuiteStore, suiteStore, suiteStores } from '../helpers/postgres.js';

/**
 * What the request log keeps of requests refused at the door (docs/runtime.md#request-log-and-replay):
 * header names, a bounded path, no query, in a part of `hooks.log.maxBytes` of their own that
 * never pushes out an authenticated record; and ids of hookd's own.
 */

const HOOK_TOKEN = 'refused-hook-token-0123456789';
const GATEWAY_TOKEN = 'refused-gateway-token-0123456789';
const HOOK = { authorization: `Bearer ${HOOK_TOKEN}` };
const ADMIN = { authorization: `Bearer ${GATEWAY_TOKEN}` };
const MAX_BYTES = 2 * 1024 * 1024;

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

interface Listed {
  id: string;
  url: string;
  path: string;
  status: number;
  authenticated: boolean;
  headers?: Record<string, string>;
}

/** A refused request from a loopback address of its own: a 14 KB header and a 1.5 KB query. */
function refusedFrom(hookd: HookdProcess, from: string, n: number): Promise<number> {
  const { hostname, port } = new URL(hookd.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: hostname,
        port,
        localAddress: from,
        method: 'POST',
        path: `/hooks/wake/${'p'.repeat(400)}?q=${'x'.repeat(1500)}&n=${n}`,
        headers: {
          authorization: 'Bearer not-the-hook-token-0123',
          'x-padding': 'v'.repeat(14_000),
          'content-type': 'application/json',
        },
        agent: false,
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end('{"text":"never kept"}');
  });
}

let store: SuiteStore;

describe.each(suiteStores)('records of refused requests on %s', (kind) => {
  beforeAll(() => {
    store = suiteStore(kind);
  });
  afterAll(() => store.stop());

  let key = 0;
  async function gateway(): Promise<{
    hookd: HookdProcess;
    admin: (path: string) => Promise<Record<string, unknown>>;
  }> {
    const hookd = await startHookd({
      config: {
        storage: await store.storage(`refused-${++key}`),
        gateway: { auth: { token: GATEWAY_TOKEN } },
        hooks: { enabled: true, token: HOOK_TOKEN, log: { maxBytes: MAX_BYTES } },
        agents: { defaults: { heartbeat: { every: '0' } } },
      },
    });
    cleanups.push(() => hookd.stop());
    const admin = async (path: string) => (await call(`${hookd.url}${path}`, { method: 'GET', headers: ADMIN })).body;
    return { hookd, admin };
  }

  it('keeps every authenticated record through 960 refused requests of 16 KB from 16 addresses, within 2 MiB', async () => {
    const { hookd, admin } = await gateway();
    const accepted: string[] = [];
    for (let n = 0; n < 20; n++) {
      const answer = await call(`${hookd.url}/hooks/wake`, { headers: HOOK, json: { text: `kept ${n}` } });
      expect(answer.status).toBe(200);
      accepted.push(answer.headers['x-request-id'] as string);
    }
    const statuses: number[] = [];
    for (let round = 0; round < 60; round++) {
      const sent = Array.from({ length: 16 }, (_, a) => refusedFrom(hookd, `127.0.0.${a + 2}`, round));
      statuses.push(...(await Promise.all(sent)));
    }
    // 20 wrong tokens from an address, then 429 for the minute: refused either way.
    expect(statuses.filter((s) => s === 401 || s === 429)).toHaveLength(960);
    // The refused log writes in batches: wait until the records of this minute are in.
    const refused = await until(async () => {
      const page = (await admin('/api/requests?refused=true&limit=500')).requests as Listed[];
      return page.length >= 100 ? page : undefined;
    }, 'the refused records');
    // Their part of the 2 MiB is an eighth, 256 KiB, and a row counts 512 bytes at least: of the
    // 600 records the refused log wrote this minute, passes leave fewer than 512.
    await until(async () => {
      const page = (await admin('/api/requests?refused=true&limit=500')).requests as Listed[];
      return page.length < 500 ? true : undefined;
    }, 'the refused records within their part');
    const authenticated = (await admin('/api/requests?refused=false&limit=500')).requests as Listed[];
    expect(authenticated.map((r) => r.id).sort()).toEqual([...accepted].sort());
    // What a refused record keeps: header names, the path cut at 256 characters, no query.
    const one = await admin(`/api/requests/${encodeURIComponent((refused[0] as Listed).id)}`);
    expect(one.url).toBe(`/hooks/wake/${'p'.repeat(256 - '/hooks/wake/'.length)}`);
    expect(String(one.path).length).toBeLessThanOrEqual(256);
    expect(one.headers).toMatchObject({ authorization: '[masked]', 'x-padding': '', 'content-type': '' });
    expect(JSON.stringify(one).length).toBeLessThan(2048);
    // A record let in is still whole: its replay runs.
    const replay = await call(`${hookd.url}/api/requests/${accepted[0]}/replay`, { headers: ADMIN });
    expect(replay.status).toBe(200);
  }, 90_000);

  it("never lets a refused request's x-request-id stand in front of another record", async () => {
    const { hookd, admin } = await gateway();
    const headers = { ...HOOK, 'x-request-id': 'chosen-by-sender' };
    const first = await call(`${hookd.url}/hooks/wake`, { headers, json: { text: 'the real one' } });
    expect(first.status).toBe(200);
    expect(first.headers['x-request-id']).toBe('chosen-by-sender');
    const forged = await call(`${hookd.url}/hooks/wake`, {
      headers: { authorization: 'Bearer not-the-hook-token-0123', 'x-request-id': 'chosen-by-sender' },
      json: { text: 'a forgery' },
    });
    expect(forged.status).toBe(401);
    const ownId = forged.headers['x-request-id'] as string;
    expect(ownId).not.toBe('chosen-by-sender');
    await until(async () => ((await admin(`/api/requests/${ownId}`)).id === ownId ? true : undefined), 'the refusal');
    const kept = await admin('/api/requests/chosen-by-sender');
    expect(kept).toMatchObject({ id: 'chosen-by-sender', status: 200, authenticated: true });
    expect((await call(`${hookd.url}/api/requests/chosen-by-sender/replay`, { headers: ADMIN })).status).toBe(200);
  }, 60_000);
});
