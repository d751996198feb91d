import type pg from 'pg';
import {
  type AcceptContext,
  type Accepted,
  type Action,
  type ActionSink,
  type FailedRequest,
  type IdempotentAnswer,
  type RequestLogRecord,
  runIdFor,
  type StoredRequest,
} from '../../actions/index.js';
import { hookdError } from '../../errors.js';
import { newId } from '../../ids.js';
import type { SinkOptions, StoreContract } from '../contract.js';
import { type CommitQueue, createCommitQueue } from '../group-commit.js';
import { idempotencyRecordOf, idempotencyRow } from '../idempotency.js';
import { logTableOf } from '../log-table-sql.js';
import { recordBytes, requestRow } from '../requests.js';
import { acceptError, isCommitInDoubt } from '../unavailable.js';
import { DB_NOW_MS } from './clock.js';
import { queryTimeoutOf, timedQuery } from './contract.js';
import { REQUESTS_INSERT, requestsInsertValues } from './rows.js';
import { commitTimeoutOf, type SinkItem, type SinkJob, writeBatch } from './sink-batch.js';
import { createDoubts, type Doubts } from './sink-doubts.js';

/**
 * Two group commits in flight at once, each on a connection of its own: while one waits for
 * its round trip, the next turn's accepts are already on their way. Accepts only insert new
 * rows, and keys are taken in one order (sorted), so two commits never wait on each other in
 * a cycle.
 */
const CONCURRENT_COMMITS = 2;

/** A sink's pool, reads and options with their defaults, and its group commit. */
export interface PgSinkParts {
  readonly pool: pg.Pool;
  readonly reads: Pick<StoreContract, 'requests' | 'failedRequests'>;
  readonly options: SinkOptions;
  readonly now: () => number;
  /** How long an idempotency record lives. */
  readonly ttlMs: number;
  /** A job's result is whether it took its idempotency key (a record or a mark always commits). */
  readonly queue: CommitQueue<SinkItem, boolean>;
  /** Accepts answered 503 `COMMIT_UNCONFIRMED`, until the database says what became of them. */
  readonly doubts: Doubts;
}

/**
 * An ActionSink over PostgreSQL (docs/scale.md): any node accepts, and the durable accept is a
 * PostgreSQL commit. Group commit is kept: the accepts of one event-loop turn are written in one
 * transaction, a statement per table (`unnest` arrays: the cheapest shape for pg, measured in
 * bench/pg-driver.ts). Idempotency keys are unique across nodes: a key another node holds makes
 * this request 409 `IDEMPOTENCY_IN_FLIGHT`; an expired one is taken over.
 */
export function createPgSink(
  pool: pg.Pool,
  reads: Pick<StoreContract, 'requests' | 'failedRequests'>,
  options: SinkOptions = {},
): ActionSink {
  const now = options.now ?? Date.now;
  const doubts = createDoubts({
    find: (ids) => foundActions(pool, ids),
    report: (resolved) => options.onDoubtsResolved?.(resolved),
    settleMs: settleMsOf(pool),
  });
  const queue = createCommitQueue<SinkItem, boolean>({
    concurrency: CONCURRENT_COMMITS,
    commit: async (items) => {
      const jobs = items.flatMap((item) => (item.kind === 'job' ? [item.job] : []));
      const taken = await writeBatch(pool, now, jobs, items);
      doubts.committed();
      return items.map((item) => item.kind !== 'job' || taken.has(item.job));
    },
  });
  const ttlMs = (options.idempotencyTtlSeconds ?? 86_400) * 1000;
  const parts: PgSinkParts = { pool, reads, options, now, ttlMs, queue, doubts };
  return {
    accept: (actions, context) => acceptActions(parts, actions, context),
    recordRequest: (record) => recordRequest(parts, record),
    recordRefused: (records) => recordRefused(parts, records),
    markReplayed: (id) => markReplayed(parts, id),
    recordFailure: (failure) => recordFailure(parts, failure),
    findAnswer: (scope, key) => findAnswer(pool, scope, key),
    findRequest: (id) => findRequest(reads, id),
  };
}

/** Queues a request's actions for the next group commit; resolves once they are committed. */
function acceptActions(
  parts: PgSinkParts,
  actions: readonly Action[],
  context: AcceptContext,
): Promise<readonly Accepted[]> {
  parts.options.admit?.(actions);
  const prepared = prepareJob(parts, actions, context);
  return new Promise((resolve, reject) => {
    const job: SinkJob = { ...prepared, resolve, reject };
    parts.queue.add({ kind: 'job', job }).then(
      (tookKey) => settle(parts, job, tookKey),
      (err: unknown) => {
        if (isCommitInDoubt(err)) parts.doubts.add(job.requestId, job.accepted);
        job.reject(acceptError(err));
      },
    );
  });
}

/** A request's accept before its commit: the actions' ids, its idempotency row and its record. */
export function prepareJob(
  parts: Pick<PgSinkParts, 'now' | 'ttlMs'>,
  actions: readonly Action[],
  context: AcceptContext,
): Omit<SinkJob, 'resolve' | 'reject'> {
  const createdAt = parts.now();
  const accepted: Accepted[] = actions.map((action) =>
    action.kind === 'wake'
      ? { kind: 'wake', eventId: newId(), mode: action.mode }
      : { kind: 'agent', runId: runIdFor(action), sessionKey: action.sessionKey },
  );
  const intent = context.idempotency;
  const answer = intent?.respond(accepted);
  return {
    actions,
    accepted,
    createdAt,
    requestId: context.requestId,
    ...(intent && answer
      ? {
          key: `${intent.scope}\u0000${intent.key}`,
          idempotency: idempotencyRow(idempotencyRecordOf(intent, answer, createdAt, parts.ttlMs)),
        }
      : {}),
    ...(context.record ? { record: context.record(accepted) } : {}),
  };
}

/** A committed job: refused when another request holds its key, else told and answered. */
function settle(parts: PgSinkParts, job: SinkJob, tookKey: boolean): void {
  if (!tookKey) {
    job.reject(hookdError('IDEMPOTENCY_IN_FLIGHT'));
    return;
  }
  if (job.record) recorded(parts.options, [job.record]);
  try {
    parts.options.onCommitted?.(job.actions, job.accepted);
  } catch (err) {
    parts.options.onError?.(err);
  }
  job.resolve(job.accepted);
}

/** Records committed: shown live, and counted toward the log's bounds. */
function recorded(options: SinkOptions, records: readonly RequestLogRecord[]): void {
  for (const record of records) {
    options.onRecorded?.(record);
    options.retention?.added(logTableOf(record), 1, recordBytes(record));
  }
}

/** Logs a request that stored no actions, in the next group commit. */
function recordRequest(parts: PgSinkParts, record: RequestLogRecord): void {
  parts.queue.add({ kind: 'record', record }).then(
    () => recorded(parts.options, [record]),
    (err: unknown) => parts.options.onRecordError?.(err),
  );
}

/** Logs requests refused at the door in a statement of their own. */
function recordRefused(parts: PgSinkParts, records: readonly RequestLogRecord[]): void {
  // A statement of its own, never the accepts' group commit (docs/runtime.md#request-log-and-replay).
  if (records.length === 0) return;
  parts.pool.query(REQUESTS_INSERT, requestsInsertValues(records.map(requestRow), parts.now())).then(
    () => recorded(parts.options, records),
    (err: unknown) => parts.options.onRecordError?.(err),
  );
}

/** Marks a request replayed in the next group commit. */
function markReplayed(parts: PgSinkParts, id: string): void {
  parts.queue
    .add({ kind: 'replayed', id, at: parts.now() })
    .catch((err: unknown) => parts.options.onRecordError?.(err));
}

/**
 * Keeps a request answered 5xx, in the next group commit: queued before the request's record,
 * it is never committed after it, so a record shown is a record that can be replayed.
 */
function recordFailure(parts: PgSinkParts, failure: FailedRequest): void {
  const { now, options } = parts;
  parts.queue.add({ kind: 'failure', failure: { ...failure, id: newId(), createdAt: now() } }).then(
    () => options.retention?.added('failures', 1, recordBytes(failure) + failure.error.length),
    (err: unknown) => options.onRecordError?.(err),
  );
}

/**
 * The live remembered answer for an idempotency key, by the database's clock: read before a
 * keyed request's accept, so bounded as its commit is (COMMIT_TIMEOUT_MS, not the pool's 30 s).
 */
async function findAnswer(pool: pg.Pool, scope: string, key: string): Promise<IdempotentAnswer | undefined> {
  const { rows } = await pool.query<{ body_hash: string; status: number; response: string | null }>(
    timedQuery(
      `SELECT body_hash, status, response FROM idempotency WHERE scope = $1 AND key = $2 AND expires_at > ${DB_NOW_MS}`,
      [scope, key],
      commitTimeoutOf(pool),
    ),
  );
  const row = rows[0];
  if (!row) return undefined;
  return {
    bodyHash: row.body_hash,
    status: row.status,
    body: row.response === null ? null : (JSON.parse(row.response) as unknown),
  };
}

/**
 * How long after the database answers again a statement in doubt may still commit: the
 * server's `statement_timeout` (the pool's query time-out and 5 s), and 5 s more.
 */
function settleMsOf(pool: pg.Pool): number {
  return queryTimeoutOf(pool) + 10_000;
}

/** The ids among `ids` of events and runs that are there. */
async function foundActions(pool: pg.Pool, ids: readonly string[]): Promise<ReadonlySet<string>> {
  const { rows } = await pool.query<{ id: string }>(
    'SELECT id FROM events WHERE id = ANY($1::text[]) UNION ALL SELECT id FROM runs WHERE id = ANY($1::text[])',
    [ids],
  );
  return new Set(rows.map((row) => row.id));
}

/** A logged request and its kept failure, either of which may be missing. */
async function findRequest(
  reads: Pick<StoreContract, 'requests' | 'failedRequests'>,
  id: string,
): Promise<StoredRequest | undefined> {
  const [record, failure] = await Promise.all([reads.requests.get(id), reads.failedRequests.forRequest(id)]);
  if (!record && !failure) return undefined;
  return { ...(record ? { record } : {}), ...(failure ? { failure } : {}) };
}
