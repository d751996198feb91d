import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Clock, systemClock } from '../../src/clock.js';
import { loadConfig } from '../../src/config/index.js';
import { type Gateway, startGateway } from '../../src/main.js';
import { createLogRetention } from '../../src/store/index.js';
import { DB_NOW_MS } from '../../src/store/postgres/clock.js';
import { createPgContract, createPgPool, runStatements } from '../../src/store/postgres/contract.js';
import { createPgLogTables } from '../../src/store/postgres/log-tables.js';
import { migratePostgres } from '../../src/store/postgres/migrate.js';
import { createPgSink } from '../../src/store/postgres/sink.js';
import { createPgWrites } from '../../src/store/postgres/writes.js';
import { agentAction } from '../helpers/actions.js';
import { type HookdProcess, makeTempDir, startHookd } from '../helpers/hookd-process.js';
import { call, until } from '../helpers/http.js';
import { type PgCluster, postgresTestsRun, startPgCluster } from '../helpers/postgres.js';
import { hookRun } from '../helpers/runs.js';
import { skewedClockEnv } from '../helpers/skewed-clock.js';

/**
 * Every time that decides expiry, retention or a lease on a shared store is the database's
 * (docs/scale.md): a node whose clock is 8 days ahead starts, warns, and deletes nothing the
 * other nodes keep (before, its start deleted every request log and idempotency row). The
 * request log's and the kept failures' times are the database's too: a node 8 days behind or
 * ahead stamps its rows as a correct node would.
 */

const DAY_MS = 86_400_000;
let cluster: PgCluster;
const closing: (() => Promise<void>)[] = [];

beforeAll(async () => {
  if (postgresTestsRun) cluster = await startPgCluster();
}, 30_000);

afterAll(async () => {
  for (const close of closing.reverse()) await close().catch(() => undefined);
  await cluster?.stop();
});

/** The process's timers with a clock `skewMs` off. */
const skewed = (skewMs: number): Clock => ({ ...systemClock, now: () => Date.now() + skewMs });

/** A request log record received `ageMs` ago by the database's clock. */
const record = (id: string, ageMs: number) => ({
  id,
  receivedAt: Date.now() - ageMs,
  path: 'agent',
  url: '/hooks/agent',
  status: 202,
  eventIds: [],
  runIds: [],
  durationMs: 1,
  headers: {},
  body: Buffer.from('{}'),
  bodyBytes: 2,
  truncated: false,
  redacted: false,
  credentials: {},
  authenticated: true,
  bodyWhole: true,
});

describe.skipIf(!postgresTestsRun)('a node whose clock is wrong, on PostgreSQL', () => {
  it('warns, shows its skew in /metrics, and prunes and purges only by the database clock', async () => {
    const pool = createPgPool(cluster.url);
    closing.push(() => pool.end());
    await migratePostgres(pool);
    const contract = createPgContract(pool);
    // Written by the other nodes: two fresh records and one past the 7-day retention; a fresh
    // idempotency key and an expired one.
    await contract.commit((w) => {
      w.requests.insert(record('fresh-1', 60_000));
      w.requests.insert(record('fresh-2', DAY_MS));
      w.requests.insert(record('old', 8 * DAY_MS));
    });
    const intent = (key: string) => ({
      scope: 'agent',
      key,
      bodyHash: 'h',
      respond: () => ({ status: 202, body: null }),
    });
    await createPgSink(pool, contract, { idempotencyTtlSeconds: 86_400 }).accept([agentAction('kept')], {
      requestId: 'k1',
      idempotency: intent('kept'),
    });
    await pool.query(
      `INSERT INTO idempotency (scope, key, body_hash, status, response, created_at, expires_at)
       VALUES ('agent', 'expired', 'h', 202, NULL, 0, 1)`,
    );

    const lines: { level: number; msg: string; skewMs?: number; purged?: number; pruned?: number }[] = [];
    const log = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    const config = loadConfig({
      data: {
        server: { port: 0 },
        hooks: { enabled: true, token: 'hook-token-0123456789abcdef' },
        storage: { kind: 'postgres', url: cluster.url },
        gateway: { auth: { token: 'gateway-token-0123456789abcdef' } },
      },
      env: {},
    });
    const gateway: Gateway = await startGateway(config, log, { mailWatch: false, clock: skewed(8 * DAY_MS) });
    closing.push(() => gateway.close());

    const warning = lines.find((l) => l.msg.startsWith("this node's clock differs from the database's"));
    expect(warning?.skewMs).toBeGreaterThan(8 * DAY_MS - 60_000);
    const metrics = await call(`${gateway.url}/metrics`, { method: 'GET' });
    const skewS = Number(/^hookd_clock_skew_seconds (\S+)$/m.exec(String(metrics.text))?.[1]);
    expect(skewS).toBeGreaterThan(8 * 86_400 - 60);

    // The start's purge: the record past retention and the expired key go; what the others keep stays.
    await expect.poll(() => lines.find((l) => l.msg === 'old request log records pruned')?.pruned).toBe(1);
    await expect.poll(() => lines.find((l) => l.msg === 'expired idempotency records purged')?.purged).toBe(1);
    const { rows } = await pool.query<{ id: string }>('SELECT id FROM requests ORDER BY id');
    expect(rows.map((r) => r.id)).toEqual(['fresh-1', 'fresh-2']);
    const keys = await pool.query<{ key: string }>('SELECT key FROM idempotency');
    expect(keys.rows.map((r) => r.key)).toEqual(['kept']);
  });
});

const HOOK_TOKEN = 'hook-token-0123456789abcdef';
const GATEWAY_TOKEN = 'gateway-token-0123456789abcdef';
let databases = 0;

/** A database of its own on the cluster, migrated: its URL and a pool on it. */
async function freshDatabase(): Promise<{ url: string; pool: ReturnType<typeof createPgPool> }> {
  const admin = createPgPool(cluster.url);
  const name = `clock_${++databases}`;
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = cluster.url.replace(/\/hookd$/, `/${name}`);
  const pool = createPgPool(url);
  closing.push(() => pool.end());
  await migratePostgres(pool);
  return { url, pool };
}

/**
 * A spawned `hookd serve` on `url` whose host clock is `skewMs` off (its `Date` moved, as on a
 * machine set wrong); `/hooks/fails` runs a transform that throws (a kept failure).
 */
async function node(url: string, skewMs: number): Promise<HookdProcess> {
  const temp = makeTempDir();
  closing.push(async () => temp.cleanup());
  mkdirSync(join(temp.dir, 'transforms'));
  writeFileSync(join(temp.dir, 'transforms/fails.ts'), `export default () => { throw new Error('down'); };\n`);
  const hookd = await startHookd({
    dir: temp.dir,
    env: skewedClockEnv(skewMs),
    config: {
      hooks: {
        enabled: true,
        token: HOOK_TOKEN,
        transformsDir: 'transforms',
        mappings: [{ id: 'fails', match: { path: 'fails' }, transform: { module: 'fails.ts' } }],
      },
      storage: { kind: 'postgres', url },
      gateway: { auth: { token: GATEWAY_TOKEN } },
      agents: { defaults: { heartbeat: { every: '0' } } },
    },
  });
  closing.push(() => hookd.stop());
  return hookd;
}

/** `n` wakes through `gateway`: their request ids. */
async function wakes(gateway: { readonly url: string }, n: number, label: string): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const sent = await call(`${gateway.url}/hooks/wake`, {
      headers: { authorization: `Bearer ${HOOK_TOKEN}`, 'x-request-id': `${label}-${i}` },
      json: { text: `${label} ${i}` },
    });
    expect(sent.status).toBe(200);
    ids.push(`${label}-${i}`);
  }
  return ids;
}

const policy = { maxAgeMs: 7 * DAY_MS, maxBytes: 1 << 30, refusedShare: 0.125 };

describe.skipIf(!postgresTestsRun)("the request log's times on PostgreSQL, from nodes whose clocks are wrong", () => {
  it("keeps a node's records and kept failures through a correct node's pass when that node is 8 days behind", async () => {
    const { url, pool } = await freshDatabase();
    const behind = await node(url, -8 * DAY_MS);
    const ids = await wakes(behind, 3, 'behind');
    const failed = await call(`${behind.url}/hooks/fails`, {
      headers: { authorization: `Bearer ${HOOK_TOKEN}`, 'x-request-id': 'behind-failed' },
      json: { n: 1 },
    });
    expect(failed.status).toBe(500);
    const failures = async () => (await pool.query('SELECT request_id FROM failed_requests')).rows.length;
    await until(async () => ((await failures()) === 1 ? true : undefined), 'the kept failure');
    // A correct node's pass, by the database's clock: nothing here is 7 days old.
    const outcome = await createLogRetention(createPgLogTables(pool), { ...policy, maxRows: 100_000 }).enforce();
    expect(outcome).toMatchObject({ requests: 0, failures: 0 });
    const { rows } = await pool.query<{ id: string; age: number }>(
      `SELECT id, (extract(epoch FROM clock_timestamp()) * 1000)::bigint - received_at AS age FROM requests ORDER BY seq`,
    );
    expect(rows.map((r) => r.id)).toEqual([...ids, 'behind-failed']);
    for (const row of rows) expect(Math.abs(Number(row.age))).toBeLessThan(60_000);
    expect(await failures()).toBe(1);
    // A correct node replays what the node behind let in.
    const correct = await node(url, 0);
    const replay = await call(`${correct.url}/api/requests/${ids[0]}/replay`, {
      headers: { authorization: `Bearer ${GATEWAY_TOKEN}` },
    });
    expect(replay.status).toBe(200);
  }, 60_000);

  it("prunes a node's records in their turn when that node is 8 days ahead, never newer ones first", async () => {
    const { url, pool } = await freshDatabase();
    const ahead = await node(url, 8 * DAY_MS);
    const early = await wakes(ahead, 5, 'ahead');
    const correct = await node(url, 0);
    const later = await wakes(correct, 30, 'correct');
    // 35 rows against 20: a pass keeps the 18 newest (7/8 of the bound), by when they came.
    await createLogRetention(createPgLogTables(pool), { ...policy, maxRows: 20 }).enforce();
    const { rows } = await pool.query<{ id: string }>('SELECT id FROM requests ORDER BY seq');
    expect(rows.map((r) => r.id)).toEqual(later.slice(-18));
    expect(rows.map((r) => r.id)).not.toContain(early[0]);
  }, 60_000);
});

describe.skipIf(!postgresTestsRun)("a run's wait on PostgreSQL, from a node whose clock is wrong", () => {
  it('ends when the node meant, on the database clock the claims read', async () => {
    // Before: a node 10 minutes ahead stored its 30 s back-off as ending 10.5 minutes from now
    // (the claims compare with the database's clock): the run another node took waited that long.
    const pool = createPgPool(cluster.url);
    closing.push(() => pool.end());
    await migratePostgres(pool);
    await createPgContract(pool).commit((w) => w.runs.insert(hookRun('skewed-wait', { createdAt: Date.now() })));
    const ahead = 10 * 60_000;
    const { writes, statements } = createPgWrites(() => Date.now() + ahead);
    writes.runs.recordWait('skewed-wait', { reason: 'breaker open', until: Date.now() + ahead + 30_000 });
    await runStatements(pool, [statements]);
    const { rows } = await pool.query<{ left: number }>(
      `SELECT not_before - ${DB_NOW_MS} AS "left" FROM runs WHERE id = 'skewed-wait'`,
    );
    expect(Number(rows[0]?.left)).toBeGreaterThan(20_000);
    expect(Number(rows[0]?.left)).toBeLessThan(40_000);
  });
});
