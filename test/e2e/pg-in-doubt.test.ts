import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HookdError, isHookdError } from '../../src/errors.js';
import { createPgContract, createPgPool } from '../../src/store/postgres/contract.js';
import { migratePostgres } from '../../src/store/postgres/migrate.js';
import { createPgSink } from '../../src/store/postgres/sink.js';
import { COMMIT_TIMEOUT_MS } from '../../src/store/postgres/sink-batch.js';
import { isStoreUnavailable } from '../../src/store/unavailable.js';
import { agentAction, wakeAction } from '../helpers/actions.js';
import { until } from '../helpers/http.js';
import { type PgCluster, postgresTestsRun, startPgCluster } from '../helpers/postgres.js';

/**
 * A PostgreSQL server that freezes (a paused VM, a hung host) while a group commit waits for its
 * answer (docs/scale.md#failure-behaviour). The statement was sent: the server may commit it once
 * it goes on. An accept whose commit was sent and never confirmed must not be answered "nothing
 * was accepted" (503 `STORE_UNAVAILABLE`, after which a sender's retry doubles the action), but 503
 * `COMMIT_UNCONFIRMED`; one that never reached its `COMMIT` is rolled back by the server and is
 * `STORE_UNAVAILABLE`, truly. Either is answered once the accept's time-out passes, not after
 * a `ROLLBACK` waits out one more.
 */

const TIMEOUT_MS = 2500;
let cluster: PgCluster | undefined;
let pool: pg.Pool;

beforeAll(async () => {
  if (!postgresTestsRun) return;
  cluster = await startPgCluster();
  pool = createPgPool(cluster.url, { max: 4, queryTimeoutMs: TIMEOUT_MS });
  await migratePostgres(pool);
}, 60_000);

afterAll(async () => {
  cluster?.thaw();
  await pool?.end().catch(() => undefined);
  await cluster?.stop();
});

/** An accept while the server is frozen: what it failed with, and after how long. */
async function acceptFrozen(accept: () => Promise<unknown>): Promise<{ err: HookdError; ms: number }> {
  cluster?.freeze();
  const started = performance.now();
  try {
    const err = await accept().then(
      () => undefined,
      (e: unknown) => e,
    );
    const ms = performance.now() - started;
    if (!isHookdError(err)) throw new Error(`expected a coded error, got ${String(err)}`);
    return { err, ms };
  } finally {
    cluster?.thaw();
  }
}

/** Rows of `table` whose request is `requestId`, once the thawed server has read what was sent. */
const rowsOf = async (table: 'events' | 'runs', requestId: string) =>
  Number((await pool.query(`SELECT count(*) AS n FROM ${table} WHERE request_id = $1`, [requestId])).rows[0].n);

describe.skipIf(!postgresTestsRun)('an accept whose PostgreSQL server freezes', () => {
  it("gives up a keyed request's look-up of its key within the accept's 10 s, not the pool's 30 s", async () => {
    const slow = createPgPool(cluster?.url as string, { max: 1 });
    try {
      const sink = createPgSink(slow, createPgContract(slow));
      expect(await sink.findAnswer('agent', 'warm-key')).toBeUndefined();
      cluster?.freeze();
      const started = performance.now();
      const err = await sink.findAnswer('agent', 'frozen-key').then(
        () => undefined,
        (e: unknown) => e,
      );
      const ms = performance.now() - started;
      cluster?.thaw();
      // A store out of reach: the hook request is answered 503 STORE_UNAVAILABLE (src/ingress/errors.ts).
      expect(isStoreUnavailable(err)).toBe(true);
      expect(ms).toBeGreaterThanOrEqual(COMMIT_TIMEOUT_MS - 50);
      expect(ms).toBeLessThan(20_000);
    } finally {
      await slow.end().catch(() => undefined);
    }
  }, 60_000);

  it('answers COMMIT_UNCONFIRMED for a commit sent and never answered, which the server commits when it goes on', async () => {
    const resolved: unknown[] = [];
    const sink = createPgSink(pool, createPgContract(pool), { onDoubtsResolved: (r) => resolved.push(r) });
    // A connection open and idle: the frozen server takes the statement, and answers nothing.
    await sink.accept([wakeAction('warm')], { requestId: 'warm' });
    const { err, ms } = await acceptFrozen(() => sink.accept([wakeAction('frozen')], { requestId: 'in-doubt' }));
    expect(err.code).toBe('COMMIT_UNCONFIRMED');
    expect(err.statusCode).toBe(503);
    expect(err.headers).toMatchObject({ 'retry-after': '5' });
    expect(ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
    // The server read the statement as it went on, and committed it: the answer was right to doubt.
    await until(
      async () => ((await rowsOf('events', 'in-doubt')) === 1 ? true : undefined),
      'the frozen statement committed',
      20_000,
    );
    // Once a commit works again, what became of it is told, by its request id.
    await sink.accept([wakeAction('after')], { requestId: 'after-doubt' });
    await until(async () => (resolved.length > 0 ? true : undefined), 'the doubt resolved', 20_000);
    expect(resolved).toEqual([{ committed: ['in-doubt'], notCommitted: [], untold: 0 }]);
  }, 60_000);

  it('answers an accept queued behind two commits that wait on the frozen server within its own time-out, not after theirs and one more', async () => {
    const sink = createPgSink(pool, createPgContract(pool));
    // Four connections open and idle: no accept waits for a connection the frozen server would not make.
    await Promise.all(Array.from({ length: 4 }, () => pool.query('SELECT pg_sleep(0.05)')));
    cluster?.freeze();
    try {
      const send = (id: string) => {
        const sent = performance.now();
        return sink.accept([wakeAction(id)], { requestId: id }).then(
          () => ({ code: 'accepted', ms: performance.now() - sent }),
          (e: HookdError) => ({ code: e.code, ms: performance.now() - sent }),
        );
      };
      // Two group commits in flight (one per turn), then one that waits in the queue behind them.
      const first = send('queue-1');
      await new Promise((resolve) => setTimeout(resolve, 50));
      const second = send('queue-2');
      await new Promise((resolve) => setTimeout(resolve, 450));
      const third = await send('queue-3');
      expect(third.code).toBe('COMMIT_UNCONFIRMED');
      // Its commit started once the first failed (2 s after it came), with what was left of its
      // 2.5 s, at least 1 s: 3 s in all, where it waited 2 s, then 2.5 s of its own.
      expect(third.ms).toBeLessThan(TIMEOUT_MS + 1250);
      for (const earlier of await Promise.all([first, second])) expect(earlier.code).toBe('COMMIT_UNCONFIRMED');
    } finally {
      cluster?.thaw();
    }
  }, 60_000);

  it("answers STORE_UNAVAILABLE for a transaction cut off before its COMMIT, which the server rolls back, without waiting out a ROLLBACK's time-out", async () => {
    const sink = createPgSink(pool, createPgContract(pool));
    await sink.accept([wakeAction('warm')], { requestId: 'warm-2' });
    const intent = {
      scope: 'agent',
      key: 'frozen-key',
      bodyHash: 'h',
      respond: () => ({ status: 202, body: null }),
    };
    const { err, ms } = await acceptFrozen(() =>
      sink.accept([agentAction('frozen')], { requestId: 'not-committed', idempotency: intent }),
    );
    expect(err.code).toBe('STORE_UNAVAILABLE');
    // Its BEGIN waited out one time-out; a ROLLBACK queued behind it would have waited another.
    expect(ms).toBeLessThan(2 * TIMEOUT_MS - 200);
    // Once the server has gone on and noticed the connection gone, nothing of it is there, and
    // the key is free for the sender's retry.
    await sink.accept([wakeAction('after')], { requestId: 'after-thaw' });
    const inTransaction = `SELECT count(*) AS n FROM pg_stat_activity WHERE state LIKE 'idle in transaction%'`;
    await until(
      async () => (Number((await pool.query(inTransaction)).rows[0].n) === 0 ? true : undefined),
      'the cut-off transaction ended',
      20_000,
    );
    expect(await rowsOf('runs', 'not-committed')).toBe(0);
    const [retry] = await sink.accept([agentAction('retry')], { requestId: 'retry', idempotency: intent });
    expect(retry?.kind).toBe('agent');
  }, 60_000);
});
