import { ATTEMPT_COLUMNS, attemptRow } from '../attempts.js';
import type { Writes } from '../contract.js';
import { EVENT_COLUMNS, eventRow } from '../events.js';
import { FAILED_REQUEST_COLUMNS, failedRequestRow } from '../failed-requests.js';
import { IDEMPOTENCY_COLUMNS, idempotencyRow } from '../idempotency.js';
import { REQUEST_COLUMNS, requestRow } from '../requests.js';
import { CANCELLED_DELIVERY, RUN_COLUMNS, runRow } from '../runs.js';
import { DB_NOW_MS, onDbClock } from './clock.js';
import { type PgStatement, pgValue, placeholders } from './rows.js';

/**
 * `VALUES (…)` of a row of `columns` and, last, the node's clock as the statement was made: the
 * time in `column` is moved onto the database's clock (`onDbClock`, docs/scale.md).
 */
function valuesOnDbClock(columns: string, column: string): string {
  const names = columns.split(',').map((name) => name.trim());
  const node = `$${names.length + 1}::bigint`;
  return names.map((name, i) => (name === column ? onDbClock(`$${i + 1}::bigint`, node) : `$${i + 1}`)).join(', ');
}

const REQUEST_VALUES = valuesOnDbClock(REQUEST_COLUMNS, 'received_at');
const FAILED_REQUEST_VALUES = valuesOnDbClock(FAILED_REQUEST_COLUMNS, 'created_at');

/** Records one statement of the commit: `values` as PostgreSQL takes them (`pgValue`). */
type AddStatement = (text: string, ...values: unknown[]) => void;

/**
 * What a commit writes, recorded as PostgreSQL statements (the same effects as the embedded
 * store's repositories): the contract runs them in the commit's transaction. The request log's
 * and the kept failures' times are the database's clock: `now` is this node's, whose stamps are
 * moved onto it; a replay's mark is the database's time.
 */
export function createPgWrites(now: () => number = Date.now): {
  readonly writes: Writes;
  readonly statements: PgStatement[];
} {
  const statements: PgStatement[] = [];
  const add: AddStatement = (text, ...values) => {
    statements.push({ text, values: values.map(pgValue) });
  };
  const writes: Writes = {
    events: eventWrites(add),
    runs: runWrites(add, now),
    messages: messageWrites(add),
    idempotency: idempotencyWrites(add),
    requests: requestWrites(add, now),
    failedRequests: failedRequestWrites(add, now),
  };
  return { writes, statements };
}

/** The events' writes, as statements given to `add`. */
export function eventWrites(add: AddStatement): Writes['events'] {
  return {
    insert(e) {
      // A run's summary event has the run's id: a second node finishing a run whose lease it lost
      // cannot summarise it twice.
      add(
        `INSERT INTO events (${EVENT_COLUMNS}) VALUES (${placeholders(8)}) ON CONFLICT (id) DO NOTHING`,
        ...eventRow(e),
      );
    },
    markConsumed(ids, at) {
      add('UPDATE events SET consumed_at = $1 WHERE id = ANY($2::text[]) AND consumed_at IS NULL', at, [...ids]);
    },
  };
}

/** The runs' writes, as statements given to `add`. */
export function runWrites(add: AddStatement, now: () => number): Writes['runs'] {
  return {
    insert(run) {
      add(`INSERT INTO runs (${RUN_COLUMNS}, status) VALUES (${placeholders(16)}, 'queued')`, ...runRow(run));
    },
    markRunning(id, at) {
      add("UPDATE runs SET status = 'running', started_at = $1 WHERE id = $2 AND finished_at IS NULL", at, id);
    },
    finish(id, result, at) {
      add(
        // The first result stays: a node that lost the run's lease cannot overwrite it.
        'UPDATE runs SET status = $1, output = $2, error = $3, finished_at = $4 WHERE id = $5 AND finished_at IS NULL',
        result.status,
        result.output ?? null,
        result.error ?? null,
        at,
        id,
      );
    },
    markSummarized(id, at) {
      add('UPDATE runs SET summarized_at = $1 WHERE id = $2 AND summarized_at IS NULL', at, id);
    },
    recordDelivery(id, delivery) {
      add('UPDATE runs SET delivery = $1 WHERE id = $2', JSON.stringify(delivery), id);
    },
    recordWait(id, wait) {
      // The wait's end is this node's clock: moved onto the database's, which the claims read.
      add(
        `UPDATE runs SET waiting = $1, not_before = ${onDbClock('$2::bigint', '$4::bigint')} WHERE id = $3 AND summarized_at IS NULL`,
        wait?.reason ?? null,
        wait?.until ?? null,
        id,
        now(),
      );
    },
    cancel(id, error, at) {
      add(
        `UPDATE runs SET status = 'cancelled', error = $1, finished_at = COALESCE(finished_at, $2), waiting = NULL,
           not_before = NULL, delivery = COALESCE(delivery, $4) WHERE id = $3 AND summarized_at IS NULL`,
        error,
        at,
        id,
        CANCELLED_DELIVERY,
      );
    },
    requestCancel(id, at) {
      add(
        'UPDATE runs SET cancel_requested_at = $1 WHERE id = $2 AND summarized_at IS NULL AND cancel_requested_at IS NULL',
        at,
        id,
      );
    },
    recordAttempt(a) {
      add(`INSERT INTO run_attempts (${ATTEMPT_COLUMNS}) VALUES (${placeholders(7)})`, ...attemptRow(a));
    },
  };
}

/** The session messages' writes, as statements given to `add`. */
export function messageWrites(add: AddStatement): Writes['messages'] {
  return {
    append(sessionKey, messages, runId, at) {
      for (const m of messages)
        add(
          // A run's turn is stored once, whichever node records it first.
          'INSERT INTO messages (session_key, role, content, run_id, created_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING',
          sessionKey,
          m.role,
          m.content,
          runId,
          at,
        );
    },
  };
}

/** The idempotency keys' writes, as statements given to `add`. */
export function idempotencyWrites(add: AddStatement): Writes['idempotency'] {
  return {
    put(r) {
      add(
        // The key's time and expiry are the database's clock (its lifetime kept).
        `INSERT INTO idempotency (${IDEMPOTENCY_COLUMNS})
         SELECT $1, $2, $3, $4, $5, now, now + ($7::bigint - $6::bigint) FROM (SELECT ${DB_NOW_MS} AS now) AS clock
         ON CONFLICT (scope, key) DO UPDATE SET body_hash = EXCLUDED.body_hash, status = EXCLUDED.status,
           response = EXCLUDED.response, created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at`,
        ...idempotencyRow(r),
      );
    },
  };
}

/** The request log's writes, as statements given to `add`; `now` is this node's clock. */
export function requestWrites(add: AddStatement, now: () => number): Writes['requests'] {
  return {
    insert(r) {
      add(`INSERT INTO requests (${REQUEST_COLUMNS}) VALUES (${REQUEST_VALUES})`, ...requestRow(r), now());
    },
    markReplayed(id) {
      add(
        `UPDATE requests SET replayed_at = ${DB_NOW_MS} WHERE seq = (SELECT MAX(seq) FROM requests WHERE id = $1)`,
        id,
      );
    },
  };
}

/** The kept failures' writes, as statements given to `add`; `now` is this node's clock. */
export function failedRequestWrites(add: AddStatement, now: () => number): Writes['failedRequests'] {
  return {
    insert(f) {
      add(
        `INSERT INTO failed_requests (${FAILED_REQUEST_COLUMNS}) VALUES (${FAILED_REQUEST_VALUES})`,
        ...failedRequestRow(f),
        now(),
      );
    },
    markReplayed(requestId) {
      add(
        `UPDATE failed_requests SET replayed_at = ${DB_NOW_MS} WHERE request_id = $1 AND replayed_at IS NULL`,
        requestId,
      );
    },
  };
}
