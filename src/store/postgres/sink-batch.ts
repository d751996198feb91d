import type pg from 'pg';
import type { Accepted, Action, AgentAction, RequestLogRecord } from '../../actions/index.js';
import { eventRow, hookEvent } from '../events.js';
import type { FailedRequestRecord } from '../failed-requests.js';
import { requestRow } from '../requests.js';
import { hookRun, runRow } from '../runs.js';
import { commitInDoubt } from '../unavailable.js';
import { inTransaction, queryTimeoutOf, timedQuery, withClient } from './contract.js';
import type { PgStatement } from './rows.js';
import {
  EVENTS_INSERT,
  IDEMPOTENCY_INSERT,
  oneStatement,
  REQUESTS_INSERT,
  RUNS_INSERT,
  requestsInsertValues,
  transpose,
} from './rows.js';
import { createPgWrites } from './writes.js';

/**
 * What the PostgreSQL sink's group commit writes (docs/scale.md): a batch of accepts, request
 * records and replay marks as one statement, its idempotency keys taken first in the same
 * transaction.
 */

/** One request's accept, prepared before its commit: ids, its idempotency row and its record. */
export interface SinkJob {
  readonly actions: readonly Action[];
  readonly accepted: readonly Accepted[];
  readonly createdAt: number;
  readonly requestId: string;
  readonly idempotency?: unknown[];
  readonly key?: string;
  readonly record?: RequestLogRecord;
  resolve(accepted: readonly Accepted[]): void;
  reject(err: unknown): void;
}

/** What one group commit writes: accepts, request records, kept failures and replay marks. */
export type SinkItem =
  | { readonly kind: 'job'; readonly job: SinkJob }
  | { readonly kind: 'record'; readonly record: RequestLogRecord }
  | { readonly kind: 'replayed'; readonly id: string; readonly at: number }
  /** A kept failure: queued before its request's record, so never committed after it. */
  | { readonly kind: 'failure'; readonly failure: FailedRequestRecord };

/**
 * How long an accept's commit may go unanswered: a sender gives up after about 10 s (GitHub
 * waits 10), so a frozen server is answered 503 within that, not after the pool's 30 s.
 */
export const COMMIT_TIMEOUT_MS = 10_000;

/** The time-out of a sink's statements: COMMIT_TIMEOUT_MS, or the pool's own if shorter. */
export function commitTimeoutOf(pool: pg.Pool): number {
  return Math.min(COMMIT_TIMEOUT_MS, queryTimeoutOf(pool));
}

/** The least time a commit is given, however long its accepts waited for it. */
const MIN_COMMIT_MS = 1000;

/**
 * The time-out of a batch's statements: what is left of its oldest accept's commitTimeoutOf
 * since it arrived, at least MIN_COMMIT_MS. Accepts queued behind two commits that wait on a
 * silent server waited out those commits' time-out, then one of their own: 19 s, not 10.
 */
export function batchTimeoutOf(pool: pg.Pool, jobs: readonly SinkJob[], now: () => number): number {
  const full = commitTimeoutOf(pool);
  let oldest = Number.POSITIVE_INFINITY;
  for (const job of jobs) oldest = Math.min(oldest, job.createdAt);
  if (oldest === Number.POSITIVE_INFINITY) return full;
  return Math.max(Math.min(MIN_COMMIT_MS, full), full - Math.max(0, now() - oldest));
}

/**
 * Writes a batch as one statement, its inserts and updates as data-modifying `WITH` parts
 * (one round trip instead of one per table); returns the jobs whose idempotency key was taken
 * (or that had none). With keys, the keys are inserted first, in the same transaction, and
 * only the jobs that took theirs are written. A statement that commits sent and never answered
 * fails as a commit in doubt (commitInDoubt: the accepts may have been committed).
 */
export async function writeBatch(
  pool: pg.Pool,
  now: () => number,
  jobs: readonly SinkJob[],
  items: readonly SinkItem[],
): Promise<Set<SinkJob>> {
  const timeoutMs = batchTimeoutOf(pool, jobs, now);
  if (jobs.every((job) => job.key === undefined)) {
    await withClient(pool, (client) =>
      writeAll(client, now, jobs, items, timeoutMs).catch((err: unknown) => {
        throw commitInDoubt(err);
      }),
    );
    return new Set(jobs);
  }
  return inTransaction(
    pool,
    async (client) => {
      const taken = await takeKeys(client, jobs, timeoutMs);
      await writeAll(
        client,
        now,
        jobs.filter((job) => taken.has(job)),
        items,
        timeoutMs,
      );
      return taken;
    },
    timeoutMs,
  );
}

/** The kept jobs' actions, the records, kept failures and replay marks, in one statement that notifies queued runs. */
async function writeAll(
  db: pg.PoolClient,
  now: () => number,
  kept: readonly SinkJob[],
  items: readonly SinkItem[],
  timeoutMs: number,
): Promise<void> {
  const { statements, runs } = batchInserts(kept, items, now);
  const replays = createPgWrites(now);
  for (const item of items) {
    if (item.kind === 'failure') replays.writes.failedRequests.insert(item.failure);
    if (item.kind !== 'replayed') continue;
    replays.writes.requests.markReplayed(item.id, item.at);
    replays.writes.failedRequests.markReplayed(item.id, item.at);
  }
  statements.push(...replays.statements);
  if (statements.length === 0) return;
  const { text, values } = oneStatement(statements, runs);
  await db.query(timedQuery(text, values, timeoutMs));
}

/**
 * The inserts of the kept jobs' actions and of the records, each as a statement over `unnest`
 * arrays; `runs` counts the runs queued.
 */
export function batchInserts(
  kept: readonly SinkJob[],
  items: readonly SinkItem[],
  now: () => number,
): { statements: PgStatement[]; runs: number } {
  const statements: PgStatement[] = [];
  const actions = kept.flatMap((job) => job.actions.map((action, i) => ({ job, action, i })));
  const wakes = actions.filter(({ action }) => action.kind === 'wake');
  const runs = actions.filter(({ action }) => action.kind === 'agent');
  if (wakes.length > 0) {
    const rows = wakes.map(({ job, action, i }) =>
      eventRow(
        hookEvent(action as Extract<Action, { kind: 'wake' }>, idOf(job.accepted[i]), job.requestId, job.createdAt),
      ),
    );
    statements.push({ text: EVENTS_INSERT, values: transpose(rows) });
  }
  if (runs.length > 0) {
    const rows = runs.map(({ job, action, i }) =>
      runRow(hookRun(action as AgentAction, idOf(job.accepted[i]), job.requestId, job.createdAt)),
    );
    statements.push({ text: RUNS_INSERT, values: transpose(rows) });
  }
  const records = [
    ...kept.flatMap((job) => (job.record ? [job.record] : [])),
    ...items.flatMap((item) => (item.kind === 'record' ? [item.record] : [])),
  ];
  if (records.length > 0)
    statements.push({ text: REQUESTS_INSERT, values: requestsInsertValues(records.map(requestRow), now()) });
  return { statements, runs: runs.length };
}

/** Inserts the batch's idempotency rows; a key held by another request is not taken. */
export async function takeKeys(
  client: pg.PoolClient,
  jobs: readonly SinkJob[],
  timeoutMs: number,
): Promise<Set<SinkJob>> {
  const taken = new Set(jobs.filter((job) => job.key === undefined));
  const keyed = new Map<string, SinkJob>();
  // Taken in the keys' order: two commits racing for the same keys never wait on each other in a cycle.
  const sorted = jobs.filter((job) => job.key !== undefined).sort((a, b) => ((a.key ?? '') < (b.key ?? '') ? -1 : 1));
  for (const job of sorted) if (job.key !== undefined && !keyed.has(job.key)) keyed.set(job.key, job);
  if (keyed.size === 0) return taken;
  const { rows } = await client.query<{ scope: string; key: string }>(
    timedQuery(
      IDEMPOTENCY_INSERT,
      transpose([...keyed.values()].map((job) => job.idempotency as unknown[])),
      timeoutMs,
    ),
  );
  for (const row of rows) {
    const job = keyed.get(`${row.scope}\u0000${row.key}`);
    if (job) taken.add(job);
  }
  return taken;
}

const idOf = (accepted: Accepted | undefined): string =>
  accepted?.kind === 'wake' ? accepted.eventId : (accepted?.runId ?? '');
