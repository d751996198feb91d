import type pg from 'pg';
import type { ClaimedRun, RenewedRuns } from '../contract.js';

/**
 * What several nodes on one PostgreSQL need to share work (docs/scale.md): runs claimed under a
 * lease with `FOR UPDATE SKIP LOCKED` (two nodes never take the same run; a dead node's runs
 * are taken over once its leases lapse), single-owner jobs (the main session's heartbeat, the
 * mail watcher) held by one node at a time, and notifications that wake idle nodes when runs
 * are queued or a heartbeat is asked for. Times are epoch milliseconds of the database's
 * clock, so nodes need no synchronized clocks; tests give `now` to move time.
 */

/** The channel the sink notifies, in the commit that queues runs. */
export const RUNS_CHANNEL = 'hookd_runs';
/** The channel a node notifies when it wants a heartbeat of the main session (its owner listens). */
export const HEARTBEAT_CHANNEL = 'hookd_heartbeat';

/** `now` as given by a test, else the database's clock. */
const NOW = (param: number) => `COALESCE($${param}::bigint, (extract(epoch FROM clock_timestamp()) * 1000)::bigint)`;

export interface RunClaim {
  readonly owner: string;
  readonly leaseMs: number;
  readonly limit: number;
  /** Models whose runs not yet past their model call are left (their breaker is open on this node). */
  readonly skipModels?: readonly string[];
  /** The time to claim at (tests); the database's clock otherwise. */
  readonly now?: number;
}

/**
 * Claims up to `limit` runs not yet summarized whose lease is free or lapsed and whose wait is
 * over (`not_before`), for `owner` for `leaseMs`. Only the oldest open run of a session key is
 * claimable, and none while another run of its session is held (two runs accepted at once may
 * commit out of order), so that the runs of one session execute one after another across nodes.
 * Runs are taken fairly across mappings (docs/runtime.md#fairness): each mapping's oldest
 * claimable runs (read through its own index range, never the whole backlog) are ranked
 * first by their place in their mapping, then by age: one claimable run of every mapping goes
 * before a second of any. Rows another node is claiming at this moment are skipped, not waited for;
 * the lease is checked again on the row as locked, so that a run another node claimed since this
 * query's snapshot is not claimed twice.
 */
export async function claimRuns(db: pg.Pool | pg.PoolClient, claim: RunClaim): Promise<ClaimedRun[]> {
  const { rows } = await db.query<ClaimedRow>(
    `WITH RECURSIVE clock AS (SELECT ${NOW(3)} AS now),
     sources (src) AS (
       SELECT min(COALESCE(mapping_id, '')) FROM runs WHERE summarized_at IS NULL
       UNION ALL
       SELECT (SELECT min(COALESCE(r.mapping_id, '')) FROM runs r
               WHERE r.summarized_at IS NULL AND COALESCE(r.mapping_id, '') > s.src)
       FROM sources s WHERE s.src IS NOT NULL
     ),
     ranked AS (
       SELECT c.seq, row_number() OVER (PARTITION BY s.src ORDER BY c.seq) AS turn
       FROM sources s CROSS JOIN LATERAL (
         SELECT r.seq FROM runs r
         WHERE COALESCE(r.mapping_id, '') = s.src AND r.summarized_at IS NULL
           AND (r.lease_until IS NULL OR r.lease_until < (SELECT now FROM clock))
           AND (r.not_before IS NULL OR r.not_before <= (SELECT now FROM clock))
           AND NOT (r.finished_at IS NULL AND r.model = ANY($5::text[]))
           AND NOT EXISTS (
             SELECT 1 FROM runs o
             WHERE o.session_key = r.session_key AND o.summarized_at IS NULL AND o.id <> r.id
               AND (o.seq < r.seq OR o.lease_until >= (SELECT now FROM clock)))
         ORDER BY r.seq LIMIT $6
       ) c
       WHERE s.src IS NOT NULL
     )
     UPDATE runs SET lease_owner = $1, lease_until = (SELECT now FROM clock) + $2
     WHERE seq IN (
       SELECT r.seq FROM runs r JOIN ranked k ON k.seq = r.seq
       WHERE r.summarized_at IS NULL AND (r.lease_until IS NULL OR r.lease_until < (SELECT now FROM clock))
       ORDER BY k.turn, k.seq LIMIT $4
       FOR UPDATE OF r SKIP LOCKED)
     RETURNING seq, id, session_key, mapping_id, model, finished_at IS NOT NULL AS model_done,
       cancel_requested_at IS NOT NULL AS cancel_requested`,
    [
      claim.owner,
      claim.leaseMs,
      claim.now ?? null,
      claim.limit,
      [...(claim.skipModels ?? [])],
      // Each mapping's candidates: more than the claim, as other nodes may be claiming some right now.
      claim.limit * 4 + 8,
    ],
  );
  // RETURNING has no order: oldest first, as the scheduler expects.
  return rows.sort((a, b) => a.seq - b.seq).map(claimedOf);
}

interface ClaimedRow {
  seq: number;
  id: string;
  session_key: string;
  mapping_id: string | null;
  model: string;
  model_done: boolean;
  cancel_requested: boolean;
}

const claimedOf = (r: ClaimedRow): ClaimedRun => ({
  id: r.id,
  sessionKey: r.session_key,
  ...(r.mapping_id === null ? {} : { mappingId: r.mapping_id }),
  ...(r.model_done ? {} : { model: r.model }),
  ...(r.cancel_requested ? { cancelRequested: true } : {}),
});

/**
 * Takes the lease of the unsummarized run `id` for `owner` when no live lease holds it (an operator
 * cancels it here); false when another node holds it, or it is over.
 */
export async function takeRun(
  db: pg.Pool | pg.PoolClient,
  take: { readonly owner: string; readonly id: string; readonly leaseMs: number; readonly now?: number },
): Promise<boolean> {
  const { rowCount } = await db.query(
    `WITH clock AS (SELECT ${NOW(4)} AS now)
     UPDATE runs SET lease_owner = $1, lease_until = (SELECT now FROM clock) + $3
     WHERE id = $2 AND summarized_at IS NULL
       AND (lease_until IS NULL OR lease_until < (SELECT now FROM clock) OR lease_owner = $1)`,
    [take.owner, take.id, take.leaseMs, take.now ?? null],
  );
  return rowCount === 1;
}

/**
 * Extends the leases `owner` holds on `ids` by `leaseMs`. A lease that lapsed and was taken by
 * another node is in neither set. A row another transaction holds locked right now (this
 * node's own commit finishing the run, say) is skipped, not waited for, and answered as
 * `busy`: still this node's, not extended. Runs the operator asked to cancel are answered in
 * `cancelled` (docs/runtime.md#cancel): the node ends them within a renewal. Waiting would take the rows' locks in an order of
 * its own while a commit takes them in another, and PostgreSQL breaks that cycle by failing
 * one of them (`deadlock detected`).
 */
export async function renewRuns(
  db: pg.Pool | pg.PoolClient,
  renewal: { readonly owner: string; readonly ids: readonly string[]; readonly leaseMs: number; readonly now?: number },
): Promise<RenewedRuns> {
  if (renewal.ids.length === 0) return { renewed: new Set(), busy: new Set(), cancelled: new Set() };
  const { rows } = await db.query<{ id: string; renewed: boolean; cancel: boolean }>(
    `WITH mine AS (
       SELECT seq, id, cancel_requested_at FROM runs WHERE lease_owner = $1 AND id = ANY($2::text[])
     ), locked AS (
       SELECT seq FROM runs WHERE seq IN (SELECT seq FROM mine) AND lease_owner = $1 FOR UPDATE SKIP LOCKED
     ), renewed AS (
       UPDATE runs SET lease_until = ${NOW(4)} + $3 WHERE seq IN (SELECT seq FROM locked) RETURNING id
     )
     SELECT id, id IN (SELECT id FROM renewed) AS renewed, cancel_requested_at IS NOT NULL AS cancel FROM mine`,
    [renewal.owner, [...renewal.ids], renewal.leaseMs, renewal.now ?? null],
  );
  return {
    renewed: new Set(rows.filter((r) => r.renewed).map((r) => r.id)),
    busy: new Set(rows.filter((r) => !r.renewed).map((r) => r.id)),
    cancelled: new Set(rows.filter((r) => r.cancel).map((r) => r.id)),
  };
}

/** Frees the leases `owner` holds on runs not yet summarized (at shutdown), so another node takes them at once. */
export async function releaseRuns(db: pg.Pool | pg.PoolClient, owner: string): Promise<number> {
  const { rowCount } = await db.query(
    'UPDATE runs SET lease_owner = NULL, lease_until = NULL WHERE lease_owner = $1 AND summarized_at IS NULL',
    [owner],
  );
  return rowCount ?? 0;
}

/** Runs not yet summarized and not held by a live lease: the work waiting for a node. */
export async function countClaimable(db: pg.Pool | pg.PoolClient, now?: number): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM runs
     WHERE summarized_at IS NULL AND (lease_until IS NULL OR lease_until < ${NOW(1)})`,
    [now ?? null],
  );
  return rows[0]?.n ?? 0;
}

export interface JobLease {
  readonly name: string;
  readonly owner: string;
  readonly leaseMs: number;
  readonly now?: number;
}

/**
 * Takes or renews the lease of a single-owner job: true when `owner` holds it for `leaseMs`
 * from now (it was free, lapsed, or already `owner`'s), false while another node holds it.
 */
export async function holdLease(db: pg.Pool | pg.PoolClient, lease: JobLease): Promise<boolean> {
  const { rowCount } = await db.query(
    `WITH clock AS (SELECT ${NOW(4)} AS now)
     INSERT INTO leases (name, owner, until) VALUES ($1, $2, (SELECT now FROM clock) + $3)
     ON CONFLICT (name) DO UPDATE SET owner = EXCLUDED.owner, until = EXCLUDED.until
     WHERE leases.owner = EXCLUDED.owner OR leases.until < (SELECT now FROM clock)`,
    [lease.name, lease.owner, lease.leaseMs, lease.now ?? null],
  );
  return rowCount === 1;
}

/** Gives a single-owner job's lease up (at shutdown), so that another node takes it at once. */
export async function releaseLease(db: pg.Pool | pg.PoolClient, name: string, owner: string): Promise<void> {
  await db.query('DELETE FROM leases WHERE name = $1 AND owner = $2', [name, owner]);
}

/** Sends `channel` a notification (outside any commit). */
export async function notify(db: pg.Pool | pg.PoolClient, channel: string): Promise<void> {
  await db.query(`NOTIFY ${channel}`);
}

/**
 * Calls `handlers[channel]` on every notification of those channels, on a connection of its
 * own; `onError` is told when that connection fails, or when a ping every `pingEveryMs` gets no
 * answer (a connection whose peer vanished says nothing); the caller listens again. Returns the
 * function that stops listening.
 */
export async function listen(
  pool: pg.Pool,
  handlers: Readonly<Record<string, () => void>>,
  onError: (err: Error) => void = () => undefined,
  pingEveryMs = 0,
): Promise<() => Promise<void>> {
  const client = await pool.connect();
  let failed = false;
  const fail = (err: Error) => {
    if (failed) return;
    failed = true;
    onError(err);
  };
  client.on('notification', (message) => handlers[message.channel]?.());
  client.on('error', fail);
  try {
    for (const channel of Object.keys(handlers)) await client.query(`LISTEN ${channel}`);
  } catch (err) {
    client.release(true);
    throw err;
  }
  const ping =
    pingEveryMs > 0
      ? setInterval(() => client.query('SELECT 1').catch((err: Error) => fail(err)), pingEveryMs)
      : undefined;
  ping?.unref();
  // The connection is closed, not returned to the pool: it holds LISTENs and their handlers.
  return async () => {
    clearInterval(ping);
    client.removeAllListeners('notification');
    client.release(true);
  };
}
