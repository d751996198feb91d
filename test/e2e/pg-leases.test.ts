import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgContract, createPgPool } from '../../src/store/postgres/contract.js';
import { claimRuns, holdLease, listenForRuns, releaseLease, renewRun } from '../../src/store/postgres/leases.js';
import { migratePostgres } from '../../src/store/postgres/migrate.js';
import { createPgSink } from '../../src/store/postgres/sink.js';
import { agentAction } from '../helpers/actions.js';
import { type PgCluster, postgresTestsRun, startPgCluster } from '../helpers/postgres.js';

/** Sharing work between nodes on one PostgreSQL (DESIGN §15): run leases, job leases, wake-ups. */

let cluster: PgCluster | undefined;
let pool: pg.Pool;

beforeAll(async () => {
  if (!postgresTestsRun) return;
  cluster = await startPgCluster();
  pool = createPgPool(cluster.url, 12);
  await migratePostgres(pool);
}, 30_000);

afterAll(async () => {
  await pool?.end();
  await cluster?.stop();
});

async function queueRuns(prefix: string, count: number): Promise<string[]> {
  const sink = createPgSink(pool, createPgContract(pool));
  const accepted = await Promise.all(
    Array.from({ length: count }, (_, i) =>
      sink.accept([agentAction(`${prefix}${i}`)], { requestId: `${prefix}${i}` }),
    ),
  );
  return accepted.flat().map((a) => (a.kind === 'agent' ? a.runId : ''));
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
          const runs = await claimRuns(pool, { owner, until: now + 30_000, now, limit: 4 });
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
      const first = await claimRuns(slow, { owner: 'slow', until: now + 30_000, now, limit: 2 });
      const started = Date.now();
      const second = await claimRuns(pool, { owner: 'fast', until: now + 30_000, now, limit: 2 });
      expect(Date.now() - started).toBeLessThan(1000);
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
    expect((await claimRuns(pool, { owner: 'dead', until: t0 + 30_000, now: t0, limit: 10 })).map((r) => r.id)).toEqual(
      [runId],
    );
    expect(await claimRuns(pool, { owner: 'alive', until: t0 + 60_000, now: t0 + 29_000, limit: 10 })).toEqual([]);
    expect(await renewRun(pool, runId as string, 'alive', t0 + 90_000)).toBe(false);
    const taken = await claimRuns(pool, { owner: 'alive', until: t0 + 90_000, now: t0 + 31_000, limit: 10 });
    expect(taken.map((r) => r.id)).toEqual([runId]);
    // The dead node, back, cannot renew what it lost.
    expect(await renewRun(pool, runId as string, 'dead', t0 + 120_000)).toBe(false);
    expect(await renewRun(pool, runId as string, 'alive', t0 + 120_000)).toBe(true);
    // A summarized run is never claimed again.
    await pool.query('UPDATE runs SET summarized_at = $1 WHERE id = $2', [t0, runId]);
    expect(await claimRuns(pool, { owner: 'x', until: t0 + 999_999, now: t0 + 999_000, limit: 10 })).toEqual([]);
  });

  it('holds a single-owner job on one node at a time', async () => {
    const t0 = Date.now();
    const lease = (owner: string, now: number) => ({ name: 'heartbeat', owner, until: now + 10_000, now });
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
    let woken = 0;
    const stop = await listenForRuns(pool, () => woken++);
    try {
      const sink = createPgSink(pool, createPgContract(pool));
      await sink.accept(
        [{ kind: 'wake', text: 'x', mode: 'now', allowUnsafeExternalContent: false, contentSource: 'webhook' }],
        { requestId: 'only-wake' },
      );
      await new Promise((r) => setTimeout(r, 200));
      expect(woken).toBe(0);
      const started = Date.now();
      await queueRuns('notify', 3);
      while (woken === 0 && Date.now() - started < 2000) await new Promise((r) => setTimeout(r, 10));
      expect(woken).toBeGreaterThan(0);
      expect(Date.now() - started).toBeLessThan(1000);
    } finally {
      await stop();
    }
  });
});
