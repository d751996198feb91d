import type { AcceptContext, Accepted, Action, ActionSink, RequestLogRecord } from '../../actions/index.js';
import { newId } from '../../ids.js';
import type { SinkOptions } from '../contract.js';
import { hookEvent } from '../events.js';
import { idempotencyRecordOf } from '../idempotency.js';
import { logTableOf } from '../log-table-sql.js';
import { recordBytes } from '../requests.js';
import { hookRun } from '../runs.js';
import { acceptError } from '../unavailable.js';
import type { Store } from './store.js';

/**
 * An ActionSink over SQLite with group commit: the requests that arrive within one turn of
 * the event loop share one transaction (with the runtime's own writes of that turn), and each
 * is answered only after that commit (the durability promise of docs/operations.md#durability holds; a commit is
 * paid once per batch, not per request).
 */
export function createStoreSink(store: Store, options: SinkOptions = {}): ActionSink {
  const now = options.now ?? Date.now;
  const ttlMs = (options.idempotencyTtlSeconds ?? 86_400) * 1000;
  const { retention } = options;
  /** A record committed: shown live, and counted toward the log's bounds. */
  const recorded = (record: RequestLogRecord) => {
    options.onRecorded?.(record);
    retention?.added(logTableOf(record), 1, recordBytes(record));
  };

  function insert(action: Action, context: AcceptContext, createdAt: number): Accepted {
    const id = newId();
    if (action.kind === 'wake') {
      store.events.insert(hookEvent(action, id, context.requestId, createdAt));
      return { kind: 'wake', eventId: id, mode: action.mode };
    }
    store.runs.insert(hookRun(action, id, context.requestId, createdAt));
    return { kind: 'agent', runId: id, sessionKey: action.sessionKey };
  }

  function write(
    actions: readonly Action[],
    context: AcceptContext,
  ): { accepted: readonly Accepted[]; record: RequestLogRecord | undefined } {
    const createdAt = now();
    const accepted = actions.map((a) => insert(a, context, createdAt));
    const intent = context.idempotency;
    if (intent) {
      store.idempotency.put(idempotencyRecordOf(intent, intent.respond(accepted), createdAt, ttlMs));
    }
    const record = context.record?.(accepted);
    if (record) store.requests.insert(record);
    return { accepted, record };
  }

  function scheduled(actions: readonly Action[], accepted: readonly Accepted[]): readonly Accepted[] {
    // The request is answered whatever happens here: a failure while scheduling work must
    // not leave it unanswered (its sender would retry and run it twice); start-up resumes it.
    try {
      options.onCommitted?.(actions, accepted);
    } catch (err) {
      options.onError?.(err);
    }
    return accepted;
  }

  return {
    accept(actions, context) {
      options.admit?.(actions);
      return store.group
        .write(() => write(actions, context))
        .then(
          ({ accepted, record }) => {
            if (record) recorded(record);
            return scheduled(actions, accepted);
          },
          (err: unknown) => {
            throw acceptError(err);
          },
        );
    },
    recordRequest(record) {
      store.group
        .write(() => store.requests.insert(record))
        .then(
          () => recorded(record),
          (err: unknown) => options.onRecordError?.(err),
        );
    },
    recordRefused(records) {
      // A transaction of its own, never the accepts' group commit (docs/runtime.md#request-log-and-replay).
      try {
        store.transaction(() => {
          for (const record of records) store.requests.insert(record);
        });
      } catch (err) {
        options.onRecordError?.(err);
        return;
      }
      for (const record of records) recorded(record);
    },
    async findRequest(id) {
      const record = store.requests.get(id);
      const failure = store.failedRequests.forRequest(id);
      if (!record && !failure) return undefined;
      return { ...(record ? { record } : {}), ...(failure ? { failure } : {}) };
    },
    markReplayed(id) {
      const at = now();
      store.group
        .write(() => {
          store.requests.markReplayed(id, at);
          store.failedRequests.markReplayed(id, at);
        })
        .catch((err: unknown) => options.onRecordError?.(err));
    },
    recordFailure(failure) {
      store.failedRequests.insert({ ...failure, id: newId(), createdAt: now() });
      retention?.added('failures', 1, recordBytes(failure) + failure.error.length);
    },
    async findAnswer(scope, key) {
      const record = store.idempotency.get(scope, key, now());
      if (!record) return undefined;
      return {
        bodyHash: record.bodyHash,
        status: record.status,
        body: record.response === null ? null : (JSON.parse(record.response) as unknown),
      };
    },
  };
}
