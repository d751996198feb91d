import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Clock, systemClock } from '../../src/clock.js';
import { loadConfig } from '../../src/config/index.js';
import { type Gateway, startGateway } from '../../src/main.js';
import { createPgContract, createPgPool } from '../../src/store/postgres/contract.js';
import { migratePostgres } from '../../src/store/postgres/migrate.js';
import { createPgSink } from '../../src/store/postgres/sink.js';
import { agentAction } from '../helpers/actions.js';
import { call } from '../helpers/http.js';
import { type PgCluster, postgresTestsRun, startPgCluster } from '../helpers/postgres.js';

/**
 * Every time that decides expiry, retention or a lease on a shared store is the database's
 * (docs/scale.md): a node whose clock is 8 days ahead starts, warns, and deletes nothing the
 * other nodes keep (before, its start deleted every request log and idempotency row).
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
