import { type AddressInfo, createServer } from 'node:net';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Action } from '../../src/actions/index.js';
import { isHookdError } from '../../src/errors.js';
import {
  createPgContract,
  createPgPool,
  IDLE_IN_TRANSACTION_MS,
  withClient,
} from '../../src/store/postgres/contract.js';
import {
  claimRuns,
  countClaimable,
  holdLease,
  listen,
  RUNS_CHANNEL,
  releaseLease,
  releaseRuns,
  renewRuns,
  takeRun,
} from '../../src/store/postgres/leases.js';
import { migratePostgres } from '../../src/store/postgres/migrate.js';
import { createPgSink } from '../../src/store/postgres/sink.js';
import { agentAction } from '../helpers/actions.js';
import { type PgCluster, postgresTestsRun, startPgCluster } from '../helpers/postgres.js';

/** Sharing work between nodes on one PostgreSQL (docs/scale.md): run leases, job leases, wake-ups. */

let cluster: PgCluster | undefined;
let pool: pg.Pool;

beforeAll(async () => {
  if (!postgresTestsRun) return;
  cluster = await startPgCluster();
  pool = createPgPool(cluster.url, { max: 12 });
  await migratePostgres(pool);
}, 30_000);

afterAll(async () => {
  await pool?.end();
  await cluster?.stop();
});

async function queueRuns(prefix: string, count: number, extra: { mappingId?: string; model?: string } = {}) {
  const sink = createPgSink(pool, createPgContract(pool));
  const accepted: string[] = [];
  // One after another: their order is their age.
  for (let i = 0; i < count; i++) {
    const action = { ...agentAction(`${prefix}${i}`), ...extra } as Action;
    const [run] = await sink.accept([action], { requestId: `${prefix}${i}` });
    accepted.push(run?.kind === 'agent' ? run.runId : '');
  }
  return accepted;
}

describe.skipIf(!postgresTestsRun)('work shared by several nodes on PostgreSQL', () => {
  it('gives each queued run to exactly one of three nodes claiming at once', async () => {
    await pool.query('DELETE FROM runs');
    const queued = await queueRuns('claim', 60);
    const now = Date.now();
    const claimed: Record<string, string[]> = { a: [], b: [], c: [] };
    await Promise.all(
      Object.keys(claimed).map(async (owner) => {
        for (;;) {
          const runs = await claimRuns(pool, { owner, leaseMs: 30_000, now, limit: 4 });
          if (runs.length === 0) return;
          claimed[owner]?.push(...runs.map((r) => r.id));
        }
      }),
    );
    const all = Object.values(claimed).flat();
    expect(all).toHaveLength(60);
    expect(new Set(all)).toEqual(new Set(queued));
  });

  it('skips the runs another node is claiming right now instead of waiting for it', async () => {
    await pool.query('DELETE FROM runs');
    const queued = await queueRuns('skip', 4);
    const now = Date.now();
    const slow = await pool.connect();
    try {
      await slow.query('BEGIN');
      const first = await claimRuns(slow, { owner: 'slow', leaseMs: 30_000, now, limit: 2 });
      const started = Date.now();
      const second = await claimRuns(pool, { owner: 'fast', leaseMs: 30_000, now, limit: 2 });
      // A claim that waited for the other transaction would wait for ever: it commits only after.
      expect(Date.now() - started).toBeLessThan(5000);
      // RETURNING gives no order: compared as sets.
      expect(first.map((r) => r.id).sort()).toEqual(queued.slice(0, 2).sort());
      expect(second.map((r) => r.id).sort()).toEqual(queued.slice(2, 4).sort());
      await slow.query('COMMIT');
    } finally {
      slow.release();
    }
  });

  it('lets another node take the runs of a node whose leases lapsed, and only then', async () => {
    await pool.query('DELETE FROM runs');
    const [runId] = await queueRuns('lapse', 1);
    const t0 = Date.now();
    expect((await claimRuns(pool, { owner: 'dead', leaseMs: 30_000, now: t0, limit: 10 })).map((r) => r.id)).toEqual([
      runId,
    ]);
    expect(await claimRuns(pool, { owner: 'alive', leaseMs: 30_000, now: t0 + 29_000, limit: 10 })).toEqual([]);
    expect(await renewRuns(pool, { owner: 'alive', ids: [runId as string], leaseMs: 30_000 })).toEqual({
      renewed: new Set(),
      busy: new Set(),
      cancelled: new Set(),
    });
    const taken = await claimRuns(pool, { owner: 'alive', leaseMs: 30_000, now: t0 + 31_000, limit: 10 });
    expect(taken.map((r) => r.id)).toEqual([runId]);
    // The dead node, back, cannot renew what it lost.
    expect(await renewRuns(pool, { owner: 'dead', ids: [runId as string], leaseMs: 30_000 })).toEqual({
      renewed: new Set(),
      busy: new Set(),
      cancelled: new Set(),
    });
    expect(await renewRuns(pool, { owner: 'alive', ids: [runId as string], leaseMs: 30_000 })).toEqual({
      renewed: new Set([runId]),
      busy: new Set(),
      cancelled: new Set(),
    });
    // A summarized run is never claimed again.
    await pool.query('UPDATE runs SET summarized_at = $1 WHERE id = $2', [t0, runId]);
    expect(await claimRuns(pool, { owner: 'x', leaseMs: 1, now: t0 + 999_000, limit: 10 })).toEqual([]);
  });

  it('takes one claimable run of every mapping before a second of any (docs/runtime.md#fairness)', async () => {
    await pool.query('DELETE FROM runs');
    const burst = await queueRuns('burst', 10, { mappingId: 'burst' });
    const [other] = await queueRuns('other', 1, { mappingId: 'other' });
    const [direct] = await queueRuns('direct', 1);
    const claimed = await claimRuns(pool, { owner: 'n', leaseMs: 30_000, limit: 4 });
    expect(claimed.map((r) => r.id).sort()).toEqual([burst[0], burst[1], other, direct].sort());
    expect(claimed.find((r) => r.id === other)).toMatchObject({ mappingId: 'other', model: 'fake/m' });
  });

  it("leaves a model's runs that still need it while its breaker is open, and runs whose wait is not over", async () => {
    await pool.query('DELETE FROM runs');
    const t0 = Date.now();
    const [dead, delivering] = await queueRuns('dead', 2, { model: 'dead/x' });
    const [live] = await queueRuns('live', 1);
    const [later] = await queueRuns('later', 1);
    // One of the dead model's runs is past its model call: its delivery does not need the model.
    await pool.query("UPDATE runs SET status = 'ok', finished_at = $1 WHERE id = $2", [t0, delivering]);
    await pool.query('UPDATE runs SET not_before = $1 WHERE id = $2', [t0 + 10_000, later]);
    const claimed = await claimRuns(pool, { owner: 'n', leaseMs: 30_000, now: t0, limit: 10, skipModels: ['dead/x'] });
    expect(claimed.map((r) => r.id).sort()).toEqual([delivering, live].sort());
    expect(claimed.find((r) => r.id === delivering)?.model).toBeUndefined();
    const afterWait = await claimRuns(pool, { owner: 'n', leaseMs: 30_000, now: t0 + 10_000, limit: 10 });
    expect(afterWait.map((r) => r.id).sort()).toEqual([dead, later].sort());
  });

  it('answers the runs the operator asked to cancel at renewal, and takes a run only while no live lease holds it', async () => {
    await pool.query('DELETE FROM runs');
    const contract = createPgContract(pool);
    const [held, free] = (await queueRuns('cancel', 2)) as [string, string];
    const t0 = Date.now();
    await claimRuns(pool, { owner: 'a', leaseMs: 30_000, now: t0, limit: 1 });
    await contract.commit((w) => w.runs.requestCancel(held, t0));
    expect(await renewRuns(pool, { owner: 'a', ids: [held], leaseMs: 30_000 })).toEqual({
      renewed: new Set([held]),
      busy: new Set(),
      cancelled: new Set([held]),
    });
    expect(await takeRun(pool, { owner: 'b', id: held, leaseMs: 30_000 })).toBe(false);
    expect(await takeRun(pool, { owner: 'b', id: free, leaseMs: 30_000 })).toBe(true);
    // Taken: no other node claims it.
    expect(await claimRuns(pool, { owner: 'c', leaseMs: 30_000, limit: 10 })).toEqual([]);
    // A claimed run the operator asked to cancel says so, so that its node ends it at once.
    await pool.query('UPDATE runs SET lease_owner = NULL, lease_until = NULL');
    const [claimed] = await claimRuns(pool, { owner: 'c', leaseMs: 30_000, limit: 1 });
    expect(claimed).toMatchObject({ id: held, cancelRequested: true });
  });

  it('renews leases beside a commit that holds the same runs, in either order, without a deadlock', async () => {
    await pool.query('DELETE FROM runs');
    const ids = (await queueRuns('renew-lock', 2)) as [string, string];
    expect(await claimRuns(pool, { owner: 'n', leaseMs: 30_000, limit: 10 })).toHaveLength(2);
    for (const [first, second] of [ids, [ids[1], ids[0]]] as const) {
      // This node's commit holds one run's row, then takes the other's, while a renewal of
      // both is in flight: a renewal waiting on the first row while holding the second made
      // PostgreSQL fail one of them with "deadlock detected".
      const outcome = await withClient(pool, async (commit) => {
        await commit.query('BEGIN');
        await commit.query("UPDATE runs SET delivery = 'x' WHERE id = $1", [first]);
        const renewal = renewRuns(pool, { owner: 'n', ids, leaseMs: 30_000 });
        const renewed = await renewal;
        await commit.query("UPDATE runs SET delivery = 'y' WHERE id = $1", [second]);
        await commit.query('COMMIT');
        return renewed;
      });
      expect(outcome).toEqual({ renewed: new Set([second]), busy: new Set([first]), cancelled: new Set() });
    }
    // Nothing holds them now: both are renewed.
    expect(await renewRuns(pool, { owner: 'n', ids, leaseMs: 30_000 })).toEqual({
      renewed: new Set(ids),
      busy: new Set(),
      cancelled: new Set(),
    });
  });

  it('claims only the oldest open run of a session, so its runs never execute on two nodes at once', async () => {
    await pool.query('DELETE FROM runs');
    const sink = createPgSink(pool, createPgContract(pool));
    const shared = (message: string) => ({ ...agentAction(message), sessionKey: 'hook:shared' }) as const;
    const [first, second] = (await sink.accept([shared('one'), shared('two')], { requestId: 'shared' })).map((a) =>
      a.kind === 'agent' ? a.runId : '',
    );
    const [other] = await queueRuns('solo', 1);
    const t0 = Date.now();
    const a = await claimRuns(pool, { owner: 'a', leaseMs: 30_000, now: t0, limit: 10 });
    expect(a.map((r) => r.id).sort()).toEqual([first, other].sort());
    // The second run of the session waits for the first one's summary, not for its lease.
    expect(await claimRuns(pool, { owner: 'b', leaseMs: 30_000, now: t0 + 60_000, limit: 10 })).toHaveLength(2);
    await pool.query('UPDATE runs SET lease_owner = NULL, lease_until = NULL');
    await pool.query('UPDATE runs SET summarized_at = $1 WHERE id = $2', [t0, first]);
    const b = await claimRuns(pool, { owner: 'b', leaseMs: 30_000, now: t0, limit: 10 });
    expect(b.map((r) => r.id).sort()).toEqual([second, other].sort());
  });

  it('holds back an older run of a session committed after a newer one was claimed', async () => {
    await pool.query('DELETE FROM runs');
    const insert = (client: pg.PoolClient | pg.Pool, id: string) =>
      client.query(
        `INSERT INTO runs (id, session_key, message, model, wake_mode, deliver, channel, status, created_at)
         VALUES ($1, 'hook:late', 'm', 'fake/m', 'now', false, 'last', 'queued', 1)`,
        [id],
      );
    // The older run's transaction takes its sequence number first and commits last.
    const slow = await pool.connect();
    try {
      await slow.query('BEGIN');
      await insert(slow, 'older');
      await insert(pool, 'newer');
      expect((await claimRuns(pool, { owner: 'x', leaseMs: 30_000, limit: 10 })).map((r) => r.id)).toEqual(['newer']);
      await slow.query('COMMIT');
    } finally {
      slow.release();
    }
    // Oldest open run of the session now, but the session's newer run is held: not claimable.
    expect(await claimRuns(pool, { owner: 'y', leaseMs: 30_000, limit: 10 })).toEqual([]);
    await pool.query("UPDATE runs SET summarized_at = 1 WHERE id = 'newer'");
    expect((await claimRuns(pool, { owner: 'y', leaseMs: 30_000, limit: 10 })).map((r) => r.id)).toEqual(['older']);
  });

  it('survives a connection the server drops mid-transaction: that write fails, the pool goes on', async () => {
    let uncaught: unknown;
    const onUncaught = (err: unknown) => {
      uncaught = err;
    };
    process.on('uncaughtException', onUncaught);
    try {
      const failed = withClient(pool, async (client) => {
        await client.query('BEGIN');
        const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
        // Its end follows the error event on the checked-out connection; waited for before the
        // next query (an `end` listener, unlike an `error` one, hides no unhandled error).
        const ended = new Promise((resolve) => client.once('end', resolve));
        await pool.query('SELECT pg_terminate_backend($1)', [rows[0]?.pid]);
        await ended;
        await client.query('SELECT 1');
      });
      await expect(failed).rejects.toThrow();
      expect(uncaught).toBeUndefined();
      expect((await pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    } finally {
      process.off('uncaughtException', onUncaught);
    }
  });

  it("frees a stopping node's leases at once and counts the runs waiting for a node", async () => {
    await pool.query('DELETE FROM runs');
    const queued = await queueRuns('free', 3);
    expect(await countClaimable(pool)).toBe(3);
    expect(await claimRuns(pool, { owner: 'stopping', leaseMs: 60_000, limit: 2 })).toHaveLength(2);
    expect(await countClaimable(pool)).toBe(1);
    expect(await releaseRuns(pool, 'stopping')).toBe(2);
    expect(await countClaimable(pool)).toBe(3);
    // Oldest first, as queued (RETURNING alone gives no order).
    const taken = await claimRuns(pool, { owner: 'other', leaseMs: 60_000, limit: 5 });
    const { rows } = await pool.query<{ id: string }>('SELECT id FROM runs ORDER BY seq');
    expect(taken.map((r) => r.id)).toEqual(rows.map((r) => r.id));
    expect(new Set(taken.map((r) => r.id))).toEqual(new Set(queued));
  });

  it('answers 503 STORE_UNAVAILABLE within the connect timeout when the database goes silent', async () => {
    // A server that takes connections and never answers: packets dropped, not refused.
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as AddressInfo;
    const quiet = createPgPool(`postgres://hookd:x@127.0.0.1:${port}/hookd`, { max: 2 });
    try {
      const started = Date.now();
      const refused = await createPgSink(quiet, createPgContract(quiet))
        .accept([agentAction('silent')], { requestId: 'silent' })
        .catch((err: unknown) => err);
      expect(isHookdError(refused, 'STORE_UNAVAILABLE')).toBe(true);
      expect(Date.now() - started).toBeLessThan(15_000);
    } finally {
      await quiet.end();
      silent.close();
    }
  }, 30_000);

  it('has the server roll back a node frozen inside a transaction, so a retry on another node is not held by its lock', async () => {
    const defaults = createPgPool(cluster?.url as string, { max: 1 });
    try {
      const { rows } = await defaults.query('SHOW idle_in_transaction_session_timeout');
      expect(rows[0].idle_in_transaction_session_timeout).toBe(`${IDLE_IN_TRANSACTION_MS / 1000}s`);
    } finally {
      await defaults.end();
    }
    // Node A took a sender's idempotency key and froze before its commit (a partition, a paused
    // VM): its connection stays open, idle inside the transaction.
    const frozen = createPgPool(cluster?.url as string, { max: 1, idleInTransactionMs: 1000 });
    const held = await frozen.connect();
    held.on('error', () => undefined);
    // One round trip: the session is idle in its transaction only from here.
    await held.query(
      `BEGIN; INSERT INTO idempotency (scope, key, body_hash, status, response, created_at, expires_at)
       VALUES ('frozen', 'delivery-1', 'h', 202, NULL, 0, 9e15)`,
    );
    try {
      // The sender's retry reaches node B with the same key: taken once A's transaction is gone,
      // not after B's 30 s query limit (a 503), again at every retry while A stays frozen.
      const started = Date.now();
      const accepted = await createPgSink(pool, createPgContract(pool)).accept([agentAction('frozen-retry')], {
        requestId: 'frozen-retry',
        idempotency: {
          scope: 'frozen',
          key: 'delivery-1',
          bodyHash: 'h',
          respond: () => ({ status: 202, body: { ok: true } }),
        },
      });
      expect(accepted).toHaveLength(1);
      expect(Date.now() - started).toBeLessThan(15_000);
    } finally {
      held.release(true);
      await frozen.end();
    }
  }, 40_000);

  it("keeps a run's first turn: a node that lost the lease appending it late changes nothing", async () => {
    const contract = createPgContract(pool);
    const [runId] = await queueRuns('turn', 1);
    const turn = [
      { role: 'user' as const, content: 'q' },
      { role: 'assistant' as const, content: 'first' },
    ];
    await contract.commit((w) => w.messages.append('hook:turn0', turn, runId as string, 10));
    await contract.group.write((w) =>
      w.messages.append(
        'hook:turn0',
        [turn[0] as never, { role: 'assistant', content: 'second' }],
        runId as string,
        12,
      ),
    );
    expect(await contract.messages.ofRun('hook:turn0', runId as string)).toEqual(turn);
  });

  it('holds a single-owner job on one node at a time', async () => {
    const t0 = Date.now();
    const lease = (owner: string, now: number) => ({ name: 'heartbeat', owner, leaseMs: 10_000, now });
    const race = await Promise.all(['a', 'b', 'c'].map((owner) => holdLease(pool, lease(owner, t0))));
    expect(race.filter(Boolean)).toHaveLength(1);
    const holder = ['a', 'b', 'c'][race.indexOf(true)] as string;
    const other = holder === 'a' ? 'b' : 'a';
    expect(await holdLease(pool, lease(holder, t0 + 5_000))).toBe(true);
    expect(await holdLease(pool, lease(other, t0 + 14_000))).toBe(false);
    // The holder stopped renewing (it died): the lease lapses and another node takes it.
    expect(await holdLease(pool, lease(other, t0 + 15_001))).toBe(true);
    expect(await holdLease(pool, lease(holder, t0 + 15_002))).toBe(false);
    // Given up at shutdown: free at once.
    await releaseLease(pool, 'heartbeat', other);
    expect(await holdLease(pool, lease(holder, t0 + 15_003))).toBe(true);
  });

  it('wakes a listening node when another commits runs, not when it commits only events', async () => {
    // Notifications arrive in commit order: a marker sent after the wake's commit arrives after
    // any notification that commit made.
    const heard: string[] = [];
    const stop = await listen(pool, {
      [RUNS_CHANNEL]: () => heard.push('runs'),
      hookd_test_marker: () => heard.push('marker'),
    });
    try {
      const sink = createPgSink(pool, createPgContract(pool));
      await sink.accept(
        [{ kind: 'wake', text: 'x', mode: 'now', allowUnsafeExternalContent: false, contentSource: 'webhook' }],
        { requestId: 'only-wake' },
      );
      await pool.query('NOTIFY hookd_test_marker');
      await expect.poll(() => heard).toContain('marker');
      expect(heard).toEqual(['marker']);
      const started = Date.now();
      await queueRuns('notify', 3);
      await expect.poll(() => heard).toContain('runs');
      // At the commit: no other notice comes (the poll fails without it); 5 s leave a loaded machine room.
      expect(Date.now() - started).toBeLessThan(5000);
    } finally {
      await stop();
    }
  });
});
