import type pg from 'pg';

/**
 * What several nodes on one PostgreSQL need to share work (DESIGN §15): runs claimed under a
 * lease with `FOR UPDATE SKIP LOCKED` (two nodes never take the same run; a dead node's runs
 * are taken over once its leases lapse), single-owner jobs (the main session's heartbeat, the
 * mail watcher) held by one node at a time, and a notification that wakes idle nodes when runs
 * are queued. Times are epoch milliseconds, given by the caller (tests move them).
 */

/** The channel the sink notifies, in the commit that queues runs. */
export const RUNS_CHANNEL = 'hookd_runs';

export interface ClaimedRun {
  readonly id: string;
  readonly status: string;
  readonly sessionKey: string;
}

/**
 * Claims up to `limit` runs not yet summarized whose lease is free or lapsed, oldest first, for
 * `owner` until `until`. Rows another node is claiming at this moment are skipped, not waited for.
 */
export async function claimRuns(
  db: pg.Pool | pg.PoolClient,
  claim: { readonly owner: string; readonly until: number; readonly now: number; readonly limit: number },
): Promise<ClaimedRun[]> {
  const { rows } = await db.query<{ id: string; status: string; session_key: string }>(
    `UPDATE runs SET lease_owner = $1, lease_until = $2
     WHERE seq IN (
       SELECT seq FROM runs
       WHERE summarized_at IS NULL AND (lease_until IS NULL OR lease_until < $3)
       ORDER BY seq LIMIT $4
       FOR UPDATE SKIP LOCKED)
     RETURNING id, status, session_key`,
    [claim.owner, claim.until, claim.now, claim.limit],
  );
  return rows.map((r) => ({ id: r.id, status: r.status, sessionKey: r.session_key }));
}

/** Extends a run's lease; false when `owner` no longer holds it (it lapsed and another node took it). */
export async function renewRun(
  db: pg.Pool | pg.PoolClient,
  id: string,
  owner: string,
  until: number,
): Promise<boolean> {
  const { rowCount } = await db.query('UPDATE runs SET lease_until = $3 WHERE id = $1 AND lease_owner = $2', [
    id,
    owner,
    until,
  ]);
  return rowCount === 1;
}

/**
 * Takes or renews the lease of a single-owner job: true when `owner` holds it until `until`
 * (it was free, lapsed, or already `owner`'s), false while another node holds it.
 */
export async function holdLease(
  db: pg.Pool | pg.PoolClient,
  lease: { readonly name: string; readonly owner: string; readonly until: number; readonly now: number },
): Promise<boolean> {
  const { rowCount } = await db.query(
    `INSERT INTO leases (name, owner, until) VALUES ($1, $2, $3)
     ON CONFLICT (name) DO UPDATE SET owner = EXCLUDED.owner, until = EXCLUDED.until
     WHERE leases.owner = EXCLUDED.owner OR leases.until < $4`,
    [lease.name, lease.owner, lease.until, lease.now],
  );
  return rowCount === 1;
}

/** Gives a single-owner job's lease up (at shutdown), so that another node takes it at once. */
export async function releaseLease(db: pg.Pool | pg.PoolClient, name: string, owner: string): Promise<void> {
  await db.query('DELETE FROM leases WHERE name = $1 AND owner = $2', [name, owner]);
}

/**
 * Calls `onRuns` whenever a node commits queued runs, on a connection of its own; returns the
 * function that stops listening.
 */
export async function listenForRuns(pool: pg.Pool, onRuns: () => void): Promise<() => Promise<void>> {
  const client = await pool.connect();
  client.on('notification', (message) => {
    if (message.channel === RUNS_CHANNEL) onRuns();
  });
  await client.query(`LISTEN ${RUNS_CHANNEL}`);
  return async () => {
    await client.query(`UNLISTEN ${RUNS_CHANNEL}`).catch(() => undefined);
    client.release();
  };
}
