import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgPool } from '../../src/store/postgres/index.js';
import { type FakeChat, startFakeChat } from '../helpers/fake-chat.js';
import { type FakeModel, isHeartbeat, startFakeModel } from '../helpers/fake-model.js';
import { type HookdProcess, makeTempDir, startHookd } from '../helpers/hookd-process.js';
import { call, until } from '../helpers/http.js';
import { type PgCluster, postgresTestsRun, startPgCluster } from '../helpers/postgres.js';

/**
 * `hookd serve` on PostgreSQL (docs/scale.md): the hook interface, runs, the request log, replay
 * and the console, with nothing kept in a local database.
 */

const HOOK_TOKEN = 'pg-hook-token-0123456789';
const GATEWAY_TOKEN = 'pg-gateway-token-0123456789';
const HOOK = { authorization: `Bearer ${HOOK_TOKEN}` };
const ADMIN = { authorization: `Bearer ${GATEWAY_TOKEN}` };

let cluster: PgCluster;
let model: FakeModel;
let chat: FakeChat;
let dir: string;
let hookd: HookdProcess;
const cleanups: (() => Promise<unknown> | unknown)[] = [];

const config = () => ({
  storage: { kind: 'postgres', url: cluster.url },
  gateway: { auth: { token: GATEWAY_TOKEN } },
  hooks: {
    enabled: true,
    token: HOOK_TOKEN,
    transformsDir: 'transforms',
    mappings: [{ id: 'flaky', match: { path: 'flaky' }, transform: { module: 'flaky.ts' }, deliver: false }],
  },
  agents: { defaults: { model: 'fake/m', heartbeat: { every: '0' } } },
  models: { providers: { fake: { baseUrl: model.url, api: 'openai-chat' } } },
  channels: { chatnet: { apiBase: chat.url, botToken: 'bot-secret-123', defaultTo: '42' } },
});

beforeAll(async () => {
  if (!postgresTestsRun) return;
  cluster = await startPgCluster();
  cleanups.push(() => cluster.stop());
  model = await startFakeModel((r) => (isHeartbeat(r) ? 'HEARTBEAT_OK' : 'the reply'));
  cleanups.push(() => model.close());
  chat = await startFakeChat();
  cleanups.push(() => chat.close());
  const temp = makeTempDir();
  cleanups.push(temp.cleanup);
  dir = temp.dir;
  mkdirSync(join(dir, 'transforms'));
  writeFileSync(join(dir, 'transforms/flaky.ts'), `export default function () { throw new Error('not yet'); }\n`);
  hookd = await startHookd({ dir, config: config() });
}, 60_000);

afterAll(async () => {
  await hookd?.stop();
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const admin = (path: string, method = 'GET') => call(`${hookd.url}${path}`, { method, headers: ADMIN });

describe.skipIf(!postgresTestsRun)('hookd serve on PostgreSQL', () => {
  it('queues a wake and consumes it in a heartbeat', async () => {
    const wake = await call(`${hookd.url}/hooks/wake`, { headers: HOOK, json: { text: 'disk almost full' } });
    expect(wake.status).toBe(200);
    const events = await until(async () => {
      const listed = (await admin('/api/main/events')).body.events as { id: string; consumed: boolean }[];
      return listed.find((e) => e.id === wake.body.eventId && e.consumed);
    }, 'the event to be consumed');
    expect(events).toBeDefined();
    expect(model.requests.some((r) => JSON.stringify(r).includes('disk almost full'))).toBe(true);
  });

  it('runs an agent turn, delivers the reply and posts the summary', async () => {
    const agent = await call(`${hookd.url}/hooks/agent`, {
      headers: { ...HOOK, 'idempotency-key': 'pg-key-1' },
      json: { message: 'summarise the build', name: 'CI', deliver: true, channel: 'chatnet', to: '42' },
    });
    expect(agent.status).toBe(202);
    const runId = agent.body.runId as string;
    const run = await until(async () => {
      const view = (await admin(`/api/runs/${runId}`)).body;
      return view.delivery ? view : undefined;
    }, 'the run to finish');
    expect(run).toMatchObject({ status: 'ok', output: 'the reply', delivery: { status: 'sent', channel: 'chatnet' } });
    expect(chat.sent.map((m) => m.text)).toContain('the reply');
    await until(async () => {
      const listed = (await admin('/api/main/events')).body.events as { text: string }[];
      return listed.find((e) => e.text.startsWith('Hook CI:'));
    }, 'the summary');
    // The same key again: the first answer, nothing run twice.
    const again = await call(`${hookd.url}/hooks/agent`, {
      headers: { ...HOOK, 'idempotency-key': 'pg-key-1' },
      json: { message: 'summarise the build', name: 'CI', deliver: true, channel: 'chatnet', to: '42' },
    });
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body.runId).toBe(runId);
    expect((await admin(`/api/runs/${runId}/transcript`)).body.messages).toHaveLength(2);
  });

  it('logs requests and replays a failed one after its transform is fixed', async () => {
    const failed = await call(`${hookd.url}/hooks/flaky`, { headers: HOOK, json: { n: 3 } });
    expect(failed.status).toBe(500);
    const id = failed.headers['x-request-id'] as string;
    const record = await until(async () => {
      const found = await admin(`/api/requests/${id}`);
      return found.status === 200 ? found.body : undefined;
    }, 'the record');
    expect(record).toMatchObject({ status: 500, code: 'TRANSFORM_FAILED', failure: { code: 'TRANSFORM_FAILED' } });
    writeFileSync(
      join(dir, 'transforms/flaky.ts'),
      `export default function ({ payload }: { payload: { n: number } }) { return { kind: 'wake', text: 'fixed ' + payload.n }; }\n`,
    );
    const replayed = await until(async () => {
      const answer = await admin(`/api/requests/${id}/replay`, 'POST');
      return answer.status === 200 ? answer : undefined;
    }, 'the fixed transform');
    expect(replayed.headers['replay-of']).toBe(id);
    const listed = (await admin('/api/requests?path=flaky')).body.requests as { replayOf?: string }[];
    expect(listed.some((r) => r.replayOf === id)).toBe(true);
  });

  it('refuses a NUL in a hook name, an admin id or a query with 400 BAD_URL, never a 500', async () => {
    const hook = await call(`${hookd.url}/hooks/tmpl%00`, {
      headers: { ...HOOK, 'idempotency-key': 'nul-key' },
      json: { n: 1 },
    });
    const byId = await admin('/api/requests/%00');
    const run = await admin('/api/runs/x%00y');
    const listed = await admin('/api/runs?status=%00');
    for (const answer of [hook, byId, run, listed]) {
      expect(answer.status).toBe(400);
      expect(answer.body).toMatchObject({ ok: false, code: 'BAD_URL', error: 'malformed URL (a NUL character, %00)' });
    }
    // Nothing reached the store: the gateway answers as before.
    expect((await admin('/api/runs?limit=1')).status).toBe(200);
  });

  it('signs the console in with sessions kept in PostgreSQL', async () => {
    const login = await call(`${hookd.url}/ui/login`, {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `token=${GATEWAY_TOKEN}`,
    });
    expect(login.status).toBe(303);
    const cookie = String(login.headers['set-cookie']).split(';')[0] as string;
    expect((await call(`${hookd.url}/api/overview`, { method: 'GET', headers: { cookie } })).body).toMatchObject({
      runsByStatus: { ok: 1 },
    });
  });

  it('lets a second node serve the same database: its run and its wake are carried out once', async () => {
    const other = makeTempDir();
    cleanups.push(other.cleanup);
    mkdirSync(join(other.dir, 'transforms'));
    writeFileSync(join(other.dir, 'transforms/flaky.ts'), 'export default function () { return null; }\n');
    // The second node on the smallest pool: one connection listens, two do everything else.
    const second = await startHookd({
      dir: other.dir,
      config: { ...config(), storage: { ...config().storage, poolSize: 3 } },
    });
    try {
      const burst = await Promise.all(
        Array.from({ length: 40 }, (_, n) =>
          call(`${second.url}/hooks/agent`, { headers: HOOK, json: { message: `burst ${n}`, deliver: false } }),
        ),
      );
      expect(burst.map((r) => r.status)).toEqual(Array(40).fill(202));
      await until(async () => {
        const runs = await Promise.all(burst.map((r) => admin(`/api/runs/${r.body.runId as string}`)));
        return runs.every((r) => r.body.status === 'ok') ? true : undefined;
      }, 'the burst on the smallest pool to finish');
      // Its connections are named by its node (pid:id host), and never more than its pool.
      const counter = createPgPool(cluster.url, { max: 1 });
      const named = await counter
        .query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name LIKE $1', [
          `hookd ${second.child.pid}:% %`,
        ])
        .finally(() => counter.end());
      expect(named.rows[0]?.n).toBeGreaterThan(0);
      expect(named.rows[0]?.n).toBeLessThanOrEqual(3);
      const before = model.requests.length;
      const agent = await call(`${second.url}/hooks/agent`, { headers: HOOK, json: { message: 'from node two' } });
      expect(agent.status).toBe(202);
      const runId = agent.body.runId as string;
      await until(async () => (await admin(`/api/runs/${runId}`)).body.delivery, 'the run of node two to finish');
      // The wake is taken by node two and consumed by the node that owns the heartbeat.
      const wake = await call(`${second.url}/hooks/wake`, { headers: HOOK, json: { text: 'wake via node two' } });
      expect(wake.status).toBe(200);
      await until(async () => {
        const listed = (await admin('/api/main/events')).body.events as { id: string; consumed: boolean }[];
        return listed.find((e) => e.id === wake.body.eventId && e.consumed);
      }, 'the wake of node two to be consumed');
      const calls = model.requests.slice(before);
      expect(calls.filter((r) => JSON.stringify(r).includes('from node two') && !isHeartbeat(r))).toHaveLength(1);
      expect((await admin(`/api/runs/${runId}`)).body.status).toBe('ok');
    } finally {
      await second.stop();
    }
    expect(second.stderr()).not.toContain(cluster.password);
  });

  it('answers 503 STORE_UNAVAILABLE while the database is down, then accepts again; stores U+0000 as U+FFFD', async () => {
    await cluster.pause();
    try {
      const refused = await call(`${hookd.url}/hooks/wake`, { headers: HOOK, json: { text: 'while down' } });
      expect(refused.status).toBe(503);
      expect(refused.body.code).toBe('STORE_UNAVAILABLE');
      expect(refused.headers['retry-after']).toBe('5');
      // A keyed request looks its key up first: that read failing is 503 too, not a 500.
      const keyed = await call(`${hookd.url}/hooks/wake`, {
        headers: { ...HOOK, 'idempotency-key': 'while-down-1' },
        json: { text: 'while down, keyed' },
      });
      expect(keyed.status).toBe(503);
      expect(keyed.body.code).toBe('STORE_UNAVAILABLE');
      // What an operator looks at answers too: the metrics at once, with the store shown down;
      // an admin read 503, not a 500 logged with its stack at every poll of the console.
      const metrics = await call(`${hookd.url}/metrics`, { method: 'GET' });
      expect(metrics.status).toBe(200);
      expect(metrics.text).toMatch(/^hookd_store_up 0$/m);
      const runs = await admin('/api/runs');
      expect(runs.status).toBe(503);
      expect(runs.body.code).toBe('STORE_UNAVAILABLE');
      // Down long enough for the notification connection to try again a few times (each second).
      await new Promise((resolve) => setTimeout(resolve, 3500));
    } finally {
      await cluster.resume();
    }
    const accepted = await until(async () => {
      const wake = await call(`${hookd.url}/hooks/wake`, {
        headers: HOOK,
        json: { text: 'back\u0000up', mode: 'next-heartbeat' },
      });
      return wake.status === 200 ? wake : undefined;
    }, 'the gateway to accept again');
    const events = (await admin('/api/main/events')).body.events as { id: string; text: string }[];
    expect(events.find((e) => e.id === accepted.body.eventId)?.text).toBe('back\uFFFDup');
    expect(hookd.stdout()).toMatch(/"code":"STORE_UNAVAILABLE"/);
    expect(hookd.stdout()).not.toMatch(/"msg":"request failed"/);
    // The outage is one line as it starts and one as it ends, not a warning with a stack per try.
    const reachLines = await until(async () => {
      const lines = hookd.stdout().split('\n');
      const back = lines.filter((line) => line.includes('"msg":"PostgreSQL is reachable again"'));
      return back.length > 0 ? { lines, back } : undefined;
    }, 'the line saying PostgreSQL is back');
    expect(reachLines.lines.filter((line) => line.includes('"msg":"PostgreSQL is out of reach')).length).toBe(1);
    expect(JSON.parse(reachLines.back[0] as string)).toMatchObject({ failures: expect.any(Number) });
    expect(JSON.parse(reachLines.back[0] as string).failures).toBeGreaterThanOrEqual(3);
    expect(hookd.stdout()).not.toMatch(/notification connection failed; listening again/);
    expect(hookd.stdout().split('a request log record was not written').length - 1).toBeLessThanOrEqual(2);
    expect(hookd.stdout()).not.toMatch(/secretKey|connectionParameters/);
    expect(hookd.stdout()).not.toContain(cluster.password);
    // The runtime's lines on a shared store name their node (its leases' owner: host:pid:id).
    const heartbeatJob = hookd
      .stdout()
      .split('\n')
      .find((line) => line.includes('"msg":"running the job on this node"'));
    expect(JSON.parse(heartbeatJob ?? '{}').node).toMatch(/^[^:]+:\d+:/);
  });

  it('answers 503 COMMIT_UNCONFIRMED within 10 s when the database freezes mid-commit, and says once it is back that the request was committed', async () => {
    // A connection open and idle (the pool closes those idle 10 s): the frozen server takes the statement.
    expect((await call(`${hookd.url}/hooks/wake`, { headers: HOOK, json: { text: 'warm' } })).status).toBe(200);
    cluster.freeze();
    let frozen: Awaited<ReturnType<typeof call>>;
    try {
      frozen = await call(`${hookd.url}/hooks/wake`, {
        headers: { ...HOOK, 'x-request-id': 'frozen-commit-1' },
        json: { text: 'sent as it froze', mode: 'next-heartbeat' },
      });
    } finally {
      cluster.thaw();
    }
    expect(frozen.status).toBe(503);
    expect(frozen.body.code).toBe('COMMIT_UNCONFIRMED');
    // Its words reach the sender: how to retry without doubling what may have been accepted.
    expect(frozen.body.error).toMatch(/may have been accepted; retry with the same Idempotency-Key/);
    expect(frozen.headers['retry-after']).toBe('5');
    await until(async () => {
      const ok = await call(`${hookd.url}/hooks/wake`, { headers: HOOK, json: { text: 'thawed' } });
      return ok.status === 200 ? true : undefined;
    }, 'the gateway to accept again');
    const told = await until(async () => {
      const line = hookd
        .stdout()
        .split('\n')
        .find((l) => l.includes('answered 503 COMMIT_UNCONFIRMED, yet committed'));
      return line ? JSON.parse(line) : undefined;
    }, 'the line naming the request committed after all');
    expect(told).toMatchObject({ level: 40, requests: ['frozen-commit-1'] });
    const events = (await admin('/api/main/events')).body.events as { text: string }[];
    expect(events.filter((e) => e.text === 'sent as it froze')).toHaveLength(1);
  }, 60_000);

  it('keeps everything across a restart, writes no local database, and exposes the same metrics', async () => {
    const runs = async () => (await admin('/api/runs?limit=100')).body.runs as { id: string; status: string }[];
    const before = await runs();
    // The agent turn's run, node two's and node two's burst of 40.
    expect(before).toHaveLength(42);
    await hookd.stop();
    hookd = await startHookd({ dir, config: config() });
    expect(await runs()).toEqual(before);
    expect(existsSync(join(dir, 'data/hookd.db'))).toBe(false);
    const metrics = await call(`${hookd.url}/metrics`, { method: 'GET' });
    expect(metrics.text).toMatch(/hookd_runs\{status="ok"\} 42/);
  });
});
