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
import { newId } from '../../ids.js';
import type { SinkOptions } from '../contract.js';
import { hookEvent } from '../events.js';
import { idempotencyRecordOf } from '../idempotency.js';
import { logTableOf } from '../log-table-sql.js';
import { recordBytes } from '../requests.js';
import { hookRun } from '../runs.js';
import { acceptError } from '../unavailable.js';
import type { Store } from './store.js';

/** What the SQLite sink's functions share: the store, the options, the clock and the keys' lifetime. */
interface SqliteSinkParts {
  readonly store: Store;
  readonly options: SinkOptions;
  readonly now: () => number;
  readonly ttlMs: number;
}

/**
 * An ActionSink over SQLite with group commit: the requests that arrive within one turn of
 * the event loop share one transaction (with the runtime's own writes of that turn), and each
 * is answered only after that commit (the durability promise of docs/operations.md#durability holds; a commit is
 * paid once per batch, not per request).
 */
export function createStoreSink(store: Store, options: SinkOptions = {}): ActionSink {
  const parts: SqliteSinkParts = {
    store,
    options,
    now: options.now ?? Date.now,
    ttlMs: (options.idempotencyTtlSeconds ?? 86_400) * 1000,
  };
  return {
    accept: (actions, context) => accept(parts, actions, context),
    recordRequest: (record) => recordRequest(parts, record),
    recordRefused: (records) => recordRefused(parts, records),
    findRequest: async (id) => findRequest(store, id),
    markReplayed: (id) => markReplayed(parts, id),
    recordFailure: (failure) => recordFailure(parts, failure),
    findAnswer: async (scope, key) => findAnswer(parts, scope, key),
  };
}

/** A record committed: shown live, and counted toward the log's bounds. */
function recorded(options: SinkOptions, record: RequestLogRecord): void {
  options.onRecorded?.(record);
  options.retention?.added(logTableOf(record), 1, recordBytes(record));
}

/** Inserts one accepted action as an event or a run; answers what was accepted. */
function insertAction(store: Store, action: Action, context: AcceptContext, createdAt: number): Accepted {
  if (action.kind === 'wake') {
    const id = newId();
    store.events.insert(hookEvent(action, id, context.requestId, createdAt));
    return { kind: 'wake', eventId: id, mode: action.mode };
  }
  const id = runIdFor(action);
  store.runs.insert(hookRun(action, id, context.requestId, createdAt));
  return { kind: 'agent', runId: id, sessionKey: action.sessionKey };
}

/** A request's writes inside the group commit: its actions, its idempotency key and its record. */
function writeAccept(
  parts: SqliteSinkParts,
  actions: readonly Action[],
  context: AcceptContext,
): { accepted: readonly Accepted[]; record: RequestLogRecord | undefined } {
  const { store } = parts;
  const createdAt = parts.now();
  const accepted = actions.map((a) => insertAction(store, a, context, createdAt));
  const intent = context.idempotency;
  if (intent) {
    store.idempotency.put(idempotencyRecordOf(intent, intent.respond(accepted), createdAt, parts.ttlMs));
  }
  const record = context.record?.(accepted);
  if (record) store.requests.insert(record);
  return { accepted, record };
}

/** Tells the runtime what was committed; a failure there is reported, never thrown. */
function scheduled(
  options: SinkOptions,
  actions: readonly Action[],
  accepted: readonly Accepted[],
): readonly Accepted[] {
  // The request is answered whatever happens here: a failure while scheduling work must
  // not leave it unanswered (its sender would retry and run it twice); start-up resumes it.
  try {
    options.onCommitted?.(actions, accepted);
  } catch (err) {
    options.onError?.(err);
  }
  return accepted;
}

/** Commits a request's actions in the next group commit; resolves once they are durable. */
function accept(
  parts: SqliteSinkParts,
  actions: readonly Action[],
  context: AcceptContext,
): Promise<readonly Accepted[]> {
  const { options } = parts;
  options.admit?.(actions);
  return parts.store.group
    .write(() => writeAccept(parts, actions, context))
    .then(
      ({ accepted, record }) => {
        if (record) recorded(options, record);
        return scheduled(options, actions, accepted);
      },
      (err: unknown) => {
        throw acceptError(err);
      },
    );
}

/** Logs a request that stored no actions, in the next group commit. */
function recordRequest({ store, options }: SqliteSinkParts, record: RequestLogRecord): void {
  store.group
    .write(() => store.requests.insert(record))
    .then(
      () => recorded(options, record),
      (err: unknown) => options.onRecordError?.(err),
    );
}

/** Logs requests refused at the door in a transaction of their own. */
function recordRefused({ store, options }: SqliteSinkParts, records: readonly RequestLogRecord[]): void {
  // A transaction of its own, never the accepts' group commit (docs/runtime.md#request-log-and-replay).
  try {
    store.transaction(() => {
      for (const record of records) store.requests.insert(record);
    });
  } catch (err) {
    options.onRecordError?.(err);
    return;
  }
  for (const record of records) recorded(options, record);
}

/** A logged request and its kept failure, either of which may be missing. */
function findRequest(store: Store, id: string): StoredRequest | undefined {
  const record = store.requests.get(id);
  const failure = store.failedRequests.forRequest(id);
  if (!record && !failure) return undefined;
  return { ...(record ? { record } : {}), ...(failure ? { failure } : {}) };
}

/** Marks a request and its kept failure replayed, in the next group commit. */
function markReplayed({ store, options, now }: SqliteSinkParts, id: string): void {
  const at = now();
  store.group
    .write(() => {
      store.requests.markReplayed(id, at);
      store.failedRequests.markReplayed(id, at);
    })
    .catch((err: unknown) => options.onRecordError?.(err));
}

/** Keeps a request answered 5xx, at once: before its record, which waits for the group commit. */
function recordFailure({ store, options, now }: SqliteSinkParts, failure: FailedRequest): void {
  store.failedRequests.insert({ ...failure, id: newId(), createdAt: now() });
  options.retention?.added('failures', 1, recordBytes(failure) + failure.error.length);
}

/** The live remembered answer for an idempotency key. */
function findAnswer({ store, now }: SqliteSinkParts, scope: string, key: string): IdempotentAnswer | undefined {
  const record = store.idempotency.get(scope, key, now());
  if (!record) return undefined;
  return {
    bodyHash: record.bodyHash,
    status: record.status,
    body: record.response === null ? null : (JSON.parse(record.response) as unknown),
  };
}
