import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgPool } from '../../src/store/postgres/contract.js';
import { type ChatRequest, isHeartbeat, lastUser } from '../helpers/fake-model.js';
import { type HookdProcess, makeTempDir, startHookd } from '../helpers/hookd-process.js';
import { call, until } from '../helpers/http.js';
import { type PgCluster, postgresTestsRun, startPgCluster } from '../helpers/postgres.js';

/**
 * Three nodes on one PostgreSQL under load, one SIGKILLed and restarted (docs/scale.md): every
 * answered event and run is kept, every run is carried out to the end once, and the main
 * session's heartbeat never runs on two nodes at once.
 */

const HOOK_TOKEN = 'nodes-hook-token-0123456789';
const HOOK = { authorization: `Bearer ${HOOK_TOKEN}` };

/** An OpenAI-compatible model server that records how many heartbeat turns were in flight at once. */
async function startWatchedModel() {
  const heartbeats = { active: 0, max: 0, total: 0 };
  const runCalls = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => {
      raw += chunk.toString();
    });
    req.on('end', () => {
      const body = JSON.parse(raw) as ChatRequest;
      const heartbeat = isHeartbeat(body);
      if (heartbeat) {
        heartbeats.active++;
        heartbeats.total++;
        heartbeats.max = Math.max(heartbeats.max, heartbeats.active);
        // Counted out when the answer is sent or the caller goes away (a killed node).
        res.on('close', () => heartbeats.active--);
      } else {
        const tag = /load-\d+-\d+/.exec(lastUser(body))?.[0] ?? 'other';
        runCalls.set(tag, (runCalls.get(tag) ?? 0) + 1);
      }
      setTimeout(
        () => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({
              choices: [{ index: 0, message: { role: 'assistant', content: heartbeat ? 'HEARTBEAT_OK' : 'done' } }],
            }),
          );
        },
        heartbeat ? 150 : 30,
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    heartbeats,
    runCalls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let cluster: PgCluster;
let pool: pg.Pool;
let model: Awaited<ReturnType<typeof startWatchedModel>>;
const nodes: (HookdProcess | undefined)[] = [];
const cleanups: (() => Promise<unknown> | unknown)[] = [];

const config = () => ({
  storage: { kind: 'postgres', url: cluster.url, leaseSeconds: 2 },
  hooks: { enabled: true, token: HOOK_TOKEN },
  agents: { defaults: { model: 'fake/m', maxConcurrentRuns: 4, heartbeat: { every: '1s' } } },
  models: { providers: { fake: { baseUrl: model.url, api: 'openai-chat' } } },
});

async function startNode(): Promise<HookdProcess> {
  const temp = makeTempDir('hookd-node-');
  cleanups.push(temp.cleanup);
  return startHookd({ dir: temp.dir, config: config() });
}

beforeAll(async () => {
  if (!postgresTestsRun) return;
  cluster = await startPgCluster();
  cleanups.push(() => cluster.stop());
  pool = createPgPool(cluster.url, { max: 4 });
  cleanups.push(() => pool.end());
  model = await startWatchedModel();
  cleanups.push(() => model.close());
}, 60_000);

afterAll(async () => {
  await Promise.all(nodes.map((node) => node?.stop()));
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

interface Answered {
  runs: { id: string; tag: string }[];
  events: string[];
  byNode: number[];
  failed: number;
}

/**
 * `clients` loops sending agent and wake requests round-robin over the live nodes until `stop`;
 * `answered` fills as they are answered.
 */
async function load(clients: number, stop: { done: boolean }, answered: Answered): Promise<Answered> {
  let next = 0;
  let sent = 0;
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      while (!stop.done) {
        const index = next++ % nodes.length;
        const node = nodes[index];
        if (!node) continue;
        const n = sent++;
        const tag = `load-${client}-${n}`;
        const agent = n % 2 === 0;
        try {
          const answer = await call(`${node.url}/hooks/${agent ? 'agent' : 'wake'}`, {
            headers: HOOK,
            json: agent ? { message: `run ${tag}`, name: tag, deliver: false } : { text: `event ${tag}` },
          });
          if (answer.status === 202 && agent) answered.runs.push({ id: answer.body.runId as string, tag });
          else if (answer.status === 200 && !agent) answered.events.push(answer.body.eventId as string);
          else answered.failed++;
          if (answer.status < 300) answered.byNode[index] = (answered.byNode[index] ?? 0) + 1;
        } catch {
          // The killed node: its connections are refused until it is back.
          answered.failed++;
        }
      }
    }),
  );
  return answered;
}

/** Waits until `ready()` holds, looking every 50 ms, for 60 s at most. */
const whenReached = (ready: () => boolean, what: string) =>
  until(async () => (ready() ? true : undefined), what, 60_000);

describe.skipIf(!postgresTestsRun)('three hookd nodes on one PostgreSQL', () => {
  it('come up together on an empty database', async () => {
    const started = await Promise.all([startNode(), startNode(), startNode()]);
    nodes.push(...started);
    const health = await Promise.all(started.map((node) => call(`${node.url}/healthz`, { method: 'GET' })));
    expect(health.map((h) => h.status)).toEqual([200, 200, 200]);
    const { rows } = await pool.query('SELECT version FROM hookd_schema');
    expect(rows).toHaveLength(1);
  }, 60_000);

  it('lose nothing answered, finish each run once and never overlap heartbeats when a node is killed', async () => {
    const stop = { done: false };
    const answered: Answered = { runs: [], events: [], byNode: [0, 0, 0], failed: 0 };
    const loading = load(12, stop, answered);
    // Each phase lasts until the load has reached a number of answers, not for a time: a loaded
    // machine answers fewer requests a second, and the same number later.
    const count = () => answered.runs.length + answered.events.length;
    await whenReached(() => answered.byNode.every((n) => n > 10) && count() > 60, 'load on every node');
    const victim = nodes[1] as HookdProcess;
    nodes[1] = undefined;
    await victim.stop('SIGKILL');
    // With the node down, the others carry the load; its runs and leases wait for them.
    const down = count();
    await whenReached(() => count() > down + 40, 'answers while a node is down');
    nodes[1] = await startNode();
    const beforeRestart = answered.byNode[1] ?? 0;
    await whenReached(
      () => (answered.byNode[1] ?? 0) > beforeRestart + 10 && answered.runs.length > 50 && answered.events.length > 50,
      'answers from the restarted node',
    );
    stop.done = true;
    await loading;

    expect(answered.runs.length).toBeGreaterThan(50);
    expect(answered.events.length).toBeGreaterThan(50);
    // Spread round-robin: every node answered, the restarted one too.
    for (const count of answered.byNode) expect(count).toBeGreaterThan(10);
    expect(answered.byNode[1]).toBeGreaterThan(beforeRestart + 10);

    // Every answered run ends summarised; every event (summaries included) is consumed.
    await until(
      async () => {
        const { rows } = await pool.query(
          `SELECT (SELECT count(*)::int FROM runs WHERE summarized_at IS NULL) AS open,
                  (SELECT count(*)::int FROM events WHERE consumed_at IS NULL) AS pending`,
        );
        return rows[0].open === 0 && rows[0].pending === 0 ? true : undefined;
      },
      'every run summarised and every event consumed',
      60_000,
    );
    const ids = answered.runs.map((r) => r.id);
    const runs = await pool.query('SELECT id, status, session_key FROM runs WHERE id = ANY($1)', [ids]);
    expect(runs.rows).toHaveLength(ids.length);
    expect(runs.rows.every((r) => r.status === 'ok')).toBe(true);
    // One summary per run, and one turn (a user and an assistant message) in each run's session.
    // A run committed by the killed node without its answer reaching the client counts too.
    const all = await pool.query('SELECT count(*)::int AS n FROM runs');
    expect(all.rows[0].n).toBeGreaterThanOrEqual(ids.length);
    expect(all.rows[0].n - ids.length).toBeLessThanOrEqual(answered.failed);
    const summaries = await pool.query("SELECT count(*)::int AS n FROM events WHERE origin = 'run-summary'");
    expect(summaries.rows[0].n).toBe(all.rows[0].n);
    const turns = await pool.query(
      'SELECT run_id, count(*)::int AS n FROM messages WHERE run_id = ANY($1) GROUP BY run_id',
      [ids],
    );
    expect(turns.rows).toHaveLength(ids.length);
    expect(turns.rows.filter((r) => r.n !== 2)).toEqual([]);
    const events = await pool.query('SELECT count(*)::int AS n FROM events WHERE id = ANY($1)', [answered.events]);
    expect(events.rows[0].n).toBe(answered.events.length);

    expect(model.heartbeats.total).toBeGreaterThan(0);
    expect(model.heartbeats.max).toBe(1);
    // A run is asked of the model again only when its node died during the call (at most its
    // maxConcurrentRuns, 4) or a node gave the run up because its lease could not be renewed in
    // time (each logged); on a loaded machine the 2 s lease of this test is tight.
    const repeated = [...model.runCalls.entries()].filter(([tag, n]) => tag !== 'other' && n > 1);
    const givenUp = [victim, ...nodes].reduce(
      (sum, node) => sum + (node?.stdout().split('leaving it to another node').length ?? 1) - 1,
      0,
    );
    expect(repeated.length).toBeLessThanOrEqual(4 + givenUp);
  }, 120_000);
});
