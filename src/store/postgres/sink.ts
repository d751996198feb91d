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
import { idempotencyRecordOf, idempotencyRow } from '../idempotency.js';
import { requestRow } from '../requests.js';
import { hookRun, runRow } from '../runs.js';
import { acceptError } from '../unavailable.js';
import { inTransaction } from './contract.js';
import { EVENTS_INSERT, IDEMPOTENCY_INSERT, oneStatement, REQUESTS_INSERT, RUNS_INSERT, transpose } from './rows.js';
import { createPgWrites, type PgStatement } from './writes.js';

export interface PgSinkOptions extends SinkOptions {
  /** Group commits in flight at once, each on its own connection (default 2). */
  maxConcurrentCommits?: number;
}

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

interface Batch {
  jobs: Job[];
  records: { record: RequestLogRecord; done: (err?: unknown) => void }[];
  replayed: { id: string; at: number }[];
}

const empty = (): Batch => ({ jobs: [], records: [], replayed: [] });

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
  options: PgSinkOptions = {},
): ActionSink {
  const now = options.now ?? Date.now;
  const ttlMs = (options.idempotencyTtlSeconds ?? 86_400) * 1000;
  const maxCommits = options.maxConcurrentCommits ?? 2;
  let queued = empty();
  let scheduled = false;
  let committing = 0;

  const schedule = () => {
    if (scheduled || committing >= maxCommits) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      const batch = queued;
      queued = empty();
      if (batch.jobs.length + batch.records.length + batch.replayed.length === 0) return;
      committing++;
      void commit(batch).finally(() => {
        committing--;
        if (queued.jobs.length + queued.records.length + queued.replayed.length > 0) schedule();
      });
    });
  };

  async function commit(batch: Batch): Promise<void> {
    try {
      const taken = await write(batch.jobs, batch);
      settle(batch, taken);
    } catch {
      // The whole transaction rolled back: each part is tried again on its own, so that one
      // bad write fails alone.
      for (const job of batch.jobs) {
        await write([job], empty()).then(
          (taken) => settle({ jobs: [job], records: [], replayed: [] }, taken),
          (err: unknown) => job.reject(acceptError(err)),
        );
      }
      for (const item of batch.records) {
        await write([], { jobs: [], records: [item], replayed: [] }).then(
          () => item.done(),
          (err: unknown) => item.done(err),
        );
      }
      if (batch.replayed.length > 0)
        await write([], { ...empty(), replayed: batch.replayed }).catch((err: unknown) => options.onRecordError?.(err));
    }
  }

  /** The inserts of the kept jobs' actions and of the records, each as a statement over `unnest` arrays. */
  function inserts(kept: readonly Job[], batch: Batch): { statements: PgStatement[]; runs: number } {
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
    const records = [...kept.flatMap((job) => (job.record ? [job.record] : [])), ...batch.records.map((r) => r.record)];
    if (records.length > 0) statements.push({ text: REQUESTS_INSERT, values: transpose(records.map(requestRow)) });
    return { statements, runs: runs.length };
  }

  /**
   * Writes a batch as one statement, its inserts and updates as data-modifying `WITH` parts
   * (one round trip instead of one per table); returns the jobs whose idempotency key was taken
   * (or that had none). With keys, the keys are inserted first, in the same transaction, and
   * only the jobs that took theirs are written.
   */
  async function write(jobs: readonly Job[], batch: Batch): Promise<Set<Job>> {
    if (jobs.every((job) => job.key === undefined)) {
      await writeAll(pool, jobs, batch);
      return new Set(jobs);
    }
    return inTransaction(pool, async (client) => {
      const taken = await takeKeys(client, jobs);
      await writeAll(
        client,
        jobs.filter((job) => taken.has(job)),
        batch,
      );
      return taken;
    });
  }

  /** The kept jobs' actions, the records and the replay marks, in one statement that notifies queued runs. */
  async function writeAll(db: pg.Pool | pg.PoolClient, kept: readonly Job[], batch: Batch): Promise<void> {
    const { statements, runs } = inserts(kept, batch);
    const replays = createPgWrites();
    for (const { id, at } of batch.replayed) {
      replays.writes.requests.markReplayed(id, at);
      replays.writes.failedRequests.markReplayed(id, at);
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
    for (const job of jobs) if (job.key !== undefined && !keyed.has(job.key)) keyed.set(job.key, job);
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

  function settle(batch: Batch, taken: Set<Job>): void {
    for (const job of batch.jobs) {
      if (!taken.has(job)) {
        job.reject(hookdError('IDEMPOTENCY_IN_FLIGHT'));
        continue;
      }
      if (job.record) options.onRecorded?.(job.record);
      try {
        options.onCommitted?.(job.actions, job.accepted);
      } catch (err) {
        options.onError?.(err);
      }
      job.resolve(job.accepted);
    }
    for (const item of batch.records) item.done();
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
        queued.jobs.push({ ...prepared, resolve, reject });
        schedule();
      });
    },
    recordRequest(record) {
      queued.records.push({
        record,
        done: (err) => (err === undefined ? options.onRecorded?.(record) : options.onRecordError?.(err)),
      });
      schedule();
    },
    markReplayed(id) {
      queued.replayed.push({ id, at: now() });
      schedule();
    },
    recordFailure(failure: FailedRequest) {
      const { writes, statements } = createPgWrites();
      writes.failedRequests.insert({ ...failure, id: newId(), createdAt: now() });
      const [insert] = statements as [{ text: string; values: readonly unknown[] }];
      pool.query(insert.text, [...insert.values]).catch((err: unknown) => options.onRecordError?.(err));
    },
    async findAnswer(scope, key) {
      const { rows } = await pool.query<{ body_hash: string; status: number; response: string | null }>(
        'SELECT body_hash, status, response FROM idempotency WHERE scope = $1 AND key = $2 AND expires_at > $3',
        [scope, key, now()],
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
