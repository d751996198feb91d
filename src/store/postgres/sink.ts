import type pg from 'pg';
import type {
  AcceptContext,
  Accepted,
  Action,
  ActionSink,
  AgentAction,
  FailedRequest,
  RequestLogRecord,
} from '../../actions/index.js';
import { hookdError } from '../../errors.js';
import { newId } from '../../ids.js';
import type { SinkOptions, StoreContract } from '../contract.js';
import { eventRow, hookEvent } from '../events.js';
import { createCommitQueue } from '../group-commit.js';
import { idempotencyRecordOf, idempotencyRow } from '../idempotency.js';
import { logTableOf } from '../log-table-sql.js';
import { recordBytes, requestRow } from '../requests.js';
import { hookRun, runRow } from '../runs.js';
import { acceptError } from '../unavailable.js';
import { DB_NOW_MS } from './clock.js';
import { inTransaction } from './contract.js';
import {
  EVENTS_INSERT,
  IDEMPOTENCY_INSERT,
  oneStatement,
  REQUESTS_INSERT,
  RUNS_INSERT,
  requestsInsertValues,
  transpose,
} from './rows.js';
import { createPgWrites, type PgStatement } from './writes.js';

/** One request's accept, prepared before its commit: ids, its idempotency row and its record. */
interface Job {
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

/** What one group commit writes: accepts, request records and replay marks. */
type Item =
  | { readonly kind: 'job'; readonly job: Job }
  | { readonly kind: 'record'; readonly record: RequestLogRecord }
  | { readonly kind: 'replayed'; readonly id: string; readonly at: number };

/**
 * Two group commits in flight at once, each on a connection of its own: while one waits for
 * its round trip, the next turn's accepts are already on their way. Accepts only insert new
 * rows, and keys are taken in one order (sorted), so two commits never wait on each other in
 * a cycle.
 */
const CONCURRENT_COMMITS = 2;

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
  const ttlMs = (options.idempotencyTtlSeconds ?? 86_400) * 1000;
  const { retention } = options;
  /** Records committed: shown live, and counted toward the log's bounds. */
  const recorded = (records: readonly RequestLogRecord[]) => {
    for (const record of records) {
      options.onRecorded?.(record);
      retention?.added(logTableOf(record), 1, recordBytes(record));
    }
  };
  const queue = createCommitQueue<Item, boolean>({
    concurrency: CONCURRENT_COMMITS,
    // A job's result is whether it took its idempotency key (a record or a mark always commits).
    commit: async (items) => {
      const jobs = items.flatMap((item) => (item.kind === 'job' ? [item.job] : []));
      const taken = await write(jobs, items);
      return items.map((item) => item.kind !== 'job' || taken.has(item.job));
    },
  });

  /** The inserts of the kept jobs' actions and of the records, each as a statement over `unnest` arrays. */
  function inserts(kept: readonly Job[], items: readonly Item[]): { statements: PgStatement[]; runs: number } {
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

  /**
   * Writes a batch as one statement, its inserts and updates as data-modifying `WITH` parts
   * (one round trip instead of one per table); returns the jobs whose idempotency key was taken
   * (or that had none). With keys, the keys are inserted first, in the same transaction, and
   * only the jobs that took theirs are written.
   */
  async function write(jobs: readonly Job[], items: readonly Item[]): Promise<Set<Job>> {
    if (jobs.every((job) => job.key === undefined)) {
      await writeAll(pool, jobs, items);
      return new Set(jobs);
    }
    return inTransaction(pool, async (client) => {
      const taken = await takeKeys(client, jobs);
      await writeAll(
        client,
        jobs.filter((job) => taken.has(job)),
        items,
      );
      return taken;
    });
  }

  /** The kept jobs' actions, the records and the replay marks, in one statement that notifies queued runs. */
  async function writeAll(db: pg.Pool | pg.PoolClient, kept: readonly Job[], items: readonly Item[]): Promise<void> {
    const { statements, runs } = inserts(kept, items);
    const replays = createPgWrites(now);
    for (const item of items) {
      if (item.kind !== 'replayed') continue;
      replays.writes.requests.markReplayed(item.id, item.at);
      replays.writes.failedRequests.markReplayed(item.id, item.at);
    }
    statements.push(...replays.statements);
    if (statements.length === 0) return;
    const { text, values } = oneStatement(statements, runs);
    await db.query(text, values);
  }

  /** Inserts the batch's idempotency rows; a key held by another request is not taken. */
  async function takeKeys(client: pg.PoolClient, jobs: readonly Job[]): Promise<Set<Job>> {
    const taken = new Set(jobs.filter((job) => job.key === undefined));
    const keyed = new Map<string, Job>();
    // Taken in the keys' order: two commits racing for the same keys never wait on each other in a cycle.
    const sorted = jobs.filter((job) => job.key !== undefined).sort((a, b) => ((a.key ?? '') < (b.key ?? '') ? -1 : 1));
    for (const job of sorted) if (job.key !== undefined && !keyed.has(job.key)) keyed.set(job.key, job);
    if (keyed.size === 0) return taken;
    const { rows } = await client.query<{ scope: string; key: string }>(
      IDEMPOTENCY_INSERT,
      transpose([...keyed.values()].map((job) => job.idempotency as unknown[])),
    );
    for (const row of rows) {
      const job = keyed.get(`${row.scope}\u0000${row.key}`);
      if (job) taken.add(job);
    }
    return taken;
  }

  /** A committed job: refused when another request holds its key, else told and answered. */
  function settle(job: Job, tookKey: boolean): void {
    if (!tookKey) {
      job.reject(hookdError('IDEMPOTENCY_IN_FLIGHT'));
      return;
    }
    if (job.record) recorded([job.record]);
    try {
      options.onCommitted?.(job.actions, job.accepted);
    } catch (err) {
      options.onError?.(err);
    }
    job.resolve(job.accepted);
  }

  function prepare(actions: readonly Action[], context: AcceptContext) {
    const createdAt = now();
    const accepted: Accepted[] = actions.map((action) =>
      action.kind === 'wake'
        ? { kind: 'wake', eventId: newId(), mode: action.mode }
        : { kind: 'agent', runId: newId(), sessionKey: action.sessionKey },
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
            idempotency: idempotencyRow(idempotencyRecordOf(intent, answer, createdAt, ttlMs)),
          }
        : {}),
      ...(context.record ? { record: context.record(accepted) } : {}),
    };
  }

  return {
    accept(actions, context) {
      options.admit?.(actions);
      const prepared = prepare(actions, context);
      return new Promise((resolve, reject) => {
        const job: Job = { ...prepared, resolve, reject };
        queue.add({ kind: 'job', job }).then(
          (tookKey) => settle(job, tookKey),
          (err: unknown) => job.reject(acceptError(err)),
        );
      });
    },
    recordRequest(record) {
      queue.add({ kind: 'record', record }).then(
        () => recorded([record]),
        (err: unknown) => options.onRecordError?.(err),
      );
    },
    recordRefused(records) {
      // A statement of its own, never the accepts' group commit (docs/runtime.md#request-log-and-replay).
      if (records.length === 0) return;
      pool.query(REQUESTS_INSERT, requestsInsertValues(records.map(requestRow), now())).then(
        () => recorded(records),
        (err: unknown) => options.onRecordError?.(err),
      );
    },
    markReplayed(id) {
      queue.add({ kind: 'replayed', id, at: now() }).catch((err: unknown) => options.onRecordError?.(err));
    },
    recordFailure(failure: FailedRequest) {
      const { writes, statements } = createPgWrites(now);
      writes.failedRequests.insert({ ...failure, id: newId(), createdAt: now() });
      const [insert] = statements as [{ text: string; values: readonly unknown[] }];
      pool.query(insert.text, [...insert.values]).then(
        () => retention?.added('failures', 1, recordBytes(failure) + failure.error.length),
        (err: unknown) => options.onRecordError?.(err),
      );
    },
    async findAnswer(scope, key) {
      const { rows } = await pool.query<{ body_hash: string; status: number; response: string | null }>(
        `SELECT body_hash, status, response FROM idempotency WHERE scope = $1 AND key = $2 AND expires_at > ${DB_NOW_MS}`,
        [scope, key],
      );
      const row = rows[0];
      if (!row) return undefined;
      return {
        bodyHash: row.body_hash,
        status: row.status,
        body: row.response === null ? null : (JSON.parse(row.response) as unknown),
      };
    },
    async findRequest(id) {
      const [record, failure] = await Promise.all([reads.requests.get(id), reads.failedRequests.forRequest(id)]);
      if (!record && !failure) return undefined;
      return { ...(record ? { record } : {}), ...(failure ? { failure } : {}) };
    },
  };
}

const idOf = (accepted: Accepted | undefined): string =>
  accepted?.kind === 'wake' ? accepted.eventId : (accepted?.runId ?? '');
