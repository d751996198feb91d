import { createHmac } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { expect } from 'vitest';
import { type FakeModel, isHeartbeat, startFakeModel } from './fake-model.js';
import { type HookdProcess, makeTempDir, startHookd } from './hookd-process.js';
import { type Answer, call, until } from './http.js';
import type { SuiteStore } from './postgres.js';

// The gateways the replay suites replay on (docs/runtime.md#request-log-and-replay): a transform
// that fails until fixed, signed senders, a token-only catch-all beside them, a logged note.
export const HOOK_TOKEN = 'replay-hook-token-0123456789';
const GATEWAY_TOKEN = 'replay-gateway-token-0123456789';
export const HOOK = { authorization: `Bearer ${HOOK_TOKEN}` };
export const ADMIN = { authorization: `Bearer ${GATEWAY_TOKEN}` };
export const SECRETS = { gh: 'gh-replay-secret', a: 'secret-of-a', c: 'secret-of-c' };

const THROWS = `export default function () { throw new Error('not fixed yet'); }\n`;
// Slow enough (300 ms of the 1 s budget) that replays sent together overlap.
const FIXED = `export default function ({ payload }: { payload: { n: number } }) {
  const end = Date.now() + 300;
  while (Date.now() < end) {}
  return { kind: 'agent', message: 'fixed ' + payload.n };
}\n`;

export interface Settings {
  readonly hookToken?: string;
  readonly ghSecret?: string;
  readonly allowQueryToken?: boolean;
  /** `hooks.log.enabled` (default true). */
  readonly log?: boolean;
}

function mappings(settings: Settings) {
  const github = (secret: string) => ({ scheme: 'github', secret });
  return [
    { id: 'flaky', match: { path: 'flaky' }, transform: { module: 'flaky.ts' }, deliver: false },
    {
      id: 'gh',
      match: { path: 'gh' },
      verify: github(settings.ghSecret ?? SECRETS.gh),
      action: 'wake',
      textTemplate: 'push {{n}}',
    },
    // One path, two senders with their own secrets, and a catch-all that only the hook token opens.
    {
      id: 'signed-a',
      match: { path: 'ingest', source: 'a' },
      verify: github(SECRETS.a),
      action: 'wake',
      textTemplate: 'a {{n}}',
    },
    {
      id: 'signed-c',
      match: { path: 'ingest', source: 'c' },
      verify: github(SECRETS.c),
      action: 'wake',
      textTemplate: 'c {{n}}',
    },
    {
      id: 'open',
      match: { path: 'ingest' },
      messageTemplate: 'open {{n}}',
      deliver: false,
      allowUnsafeExternalContent: true,
    },
    { id: 'note', match: { path: 'note' }, action: 'wake', textTemplate: 'note {{n}}' },
  ];
}

let worlds = 0;

export interface World {
  hookd: HookdProcess;
  model: FakeModel;
  storage: Record<string, unknown>;
  hook(path: string, body: unknown, headers?: Record<string, string>): Promise<Answer>;
  signed(path: string, json: object, secret: string, delivery: string): Promise<Answer>;
  replay(id: string, body?: object): Promise<Answer>;
  admin(path: string): Promise<Record<string, unknown>>;
  fix(): void;
  restart(settings: Settings): Promise<void>;
  /** A second node on the same store (PostgreSQL). */
  node(): Promise<HookdProcess>;
}

/**
 * A gateway with the replay suites' mappings on `store`, over real sockets; what it starts is
 * stopped by `cleanups`.
 */
export async function world(
  store: SuiteStore,
  cleanups: (() => Promise<unknown> | unknown)[],
  first: Settings = {},
): Promise<World> {
  const temp = makeTempDir();
  cleanups.push(temp.cleanup);
  mkdirSync(join(temp.dir, 'transforms'));
  writeFileSync(join(temp.dir, 'transforms/flaky.ts'), THROWS);
  const model = await startFakeModel((r) => (isHeartbeat(r) ? 'HEARTBEAT_OK' : 'the reply'));
  cleanups.push(() => model.close());
  const storage = await store.storage(String(++worlds));
  const config = (settings: Settings, dir = temp.dir) => ({
    config: {
      storage,
      gateway: { auth: { token: GATEWAY_TOKEN } },
      hooks: {
        enabled: true,
        token: settings.hookToken ?? HOOK_TOKEN,
        allowQueryToken: settings.allowQueryToken ?? true,
        maxBodyBytes: 8192,
        transformsDir: join(temp.dir, 'transforms'),
        log: { enabled: settings.log ?? true, redact: ['card.number'], maxBodyBytes: 2048 },
        mappings: mappings(settings),
      },
      agents: { defaults: { model: 'fake/m', heartbeat: { every: '0' } } },
      models: { providers: { fake: { baseUrl: model.url, api: 'openai-chat' } } },
    },
    dir,
  });
  const w: World = {
    hookd: await startHookd(config(first)),
    model,
    storage,
    hook: (path, body, headers = HOOK) =>
      call(`${w.hookd.url}/hooks/${path}`, typeof body === 'string' ? { headers, body } : { headers, json: body }),
    signed(path, json, secret, delivery) {
      const body = JSON.stringify(json);
      const signature = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
      const headers = {
        'content-type': 'application/json',
        'x-hub-signature-256': signature,
        'x-github-delivery': delivery,
      };
      return call(`${w.hookd.url}/hooks/${path}`, { headers, body });
    },
    replay: (id, body) =>
      call(`${w.hookd.url}/api/requests/${encodeURIComponent(id)}/replay`, {
        headers: ADMIN,
        ...(body ? { json: body } : {}),
      }),
    admin: async (path) => (await call(`${w.hookd.url}${path}`, { method: 'GET', headers: ADMIN })).body,
    fix: () => writeFileSync(join(temp.dir, 'transforms/flaky.ts'), FIXED),
    async restart(settings) {
      await w.hookd.stop();
      w.hookd = await startHookd(config(settings));
    },
    async node() {
      const other = makeTempDir();
      cleanups.push(other.cleanup);
      const node = await startHookd(config({}, other.dir));
      cleanups.push(() => node.stop());
      return node;
    },
  };
  cleanups.push(() => w.hookd.stop());
  return w;
}

export const idOf = (answer: Answer) => answer.headers['x-request-id'] as string;
export const runsOf = async (w: World) =>
  (await w.admin('/api/runs?limit=500')).runs as { runId: string; mappingId?: string }[];
export const eventsOf = async (w: World) => (await w.admin('/api/main/events')).events as { text: string }[];
export const recorded = (w: World, id: string) =>
  until(async () => {
    const record = await w.admin(`/api/requests/${id}`);
    return record.id === id ? record : undefined;
  }, `the record of ${id}`);

/** Inserts a row into the gateway's store as it is, outside hookd. */
export async function insertRow(
  store: SuiteStore,
  w: World,
  table: string,
  row: Record<string, unknown>,
): Promise<void> {
  const columns = Object.keys(row).join(', ');
  const values = Object.values(row);
  if (store.kind === 'sqlite') {
    const db = new Database(join(w.hookd.dir, 'data/hookd.db'));
    db.prepare(`INSERT INTO ${table} (${columns}) VALUES (${values.map(() => '?').join(', ')})`).run(...values);
    db.close();
    return;
  }
  const client = new pg.Client({ connectionString: w.storage.url as string });
  await client.connect();
  await client.query(
    `INSERT INTO ${table} (${columns}) VALUES (${values.map((_, i) => `$${i + 1}`).join(', ')})`,
    values,
  );
  await client.end();
}

/** Writes a record as a refused request's (no receipt), or an older hookd's, would be. */
export const insertRecord = (store: SuiteStore, w: World, id: string, status: number, code: string) =>
  insertRow(store, w, 'requests', {
    ...{ id, received_at: Date.now(), path: 'note', url: '/hooks/note', status, code, duration_ms: 1 },
    ...{ headers: '{}', body: Buffer.from('{"n":1}'), body_bytes: 7 },
  });

export function expectRefused(answer: Answer, reason: string, words: RegExp): void {
  expect(answer.status).toBe(409);
  expect(answer.body).toMatchObject({ code: 'REPLAY_NOT_ALLOWED', reason });
  expect(answer.body.error).toMatch(words);
}
