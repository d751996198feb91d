import pg from 'pg';
import { type AttemptRow, attemptOf } from '../attempts.js';
import type { StoreContract, Writes } from '../contract.js';
import type { EventRecord } from '../events.js';
import { eventOf } from '../events.js';
import type { FailedRequestRecord } from '../failed-requests.js';
import { failedRequestOf } from '../failed-requests.js';
import { createCommitQueue } from '../group-commit.js';
import type { SessionMessage } from '../messages.js';
import type { RequestLogEntry, RequestLogFilter } from '../requests.js';
import { LISTED, requestEntryOf, requestListWhere, requestRecordOf } from '../requests.js';
import { type RunListFilter, type RunRecord, runOf, runStatusOf } from '../runs.js';
import { isStoreUnavailable } from '../unavailable.js';
import { createPgAlerts } from './alerts.js';
import { DB_NOW_MS } from './clock.js';
import { createPgLogTables } from './log-tables.js';
import { createPgWrites, type PgStatement } from './writes.js';

const INT8 = 20;

/** How long a connection may take to open, and a query to answer, before it counts as failed. */
const CONNECT_TIMEOUT_MS = 5000;
const QUERY_TIMEOUT_MS = 30_000;

/**
 * A pool whose 64-bit integers (sequence numbers, epoch milliseconds, counts) read as numbers.
 * Every wait on the server is bounded: a database that goes silent (packets dropped, not
 * refused) fails connections after 5 s and queries after 30 s, and TCP keep-alive finds a
 * connection whose peer vanished, so that accepts answer 503 and shutdowns end.
 */
export function createPgPool(url: string, max = 10): pg.Pool {
  return new pg.Pool({
    connectionString: url,
    max,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    query_timeout: QUERY_TIMEOUT_MS,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8 ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format)) as never,
    },
  });
}

type Row = Record<string, unknown>;

/**
 * Runs `use` on a connection of its own. The connection's `error` event (the server went away
 * mid-transaction) is listened to, which pg leaves to the caller of `connect` and which would
 * otherwise end the process; a connection whose server is out of reach is discarded instead of
 * reused.
 */
export async function withClient<T>(pool: pg.Pool, use: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let failed: Error | undefined;
  const onError = (err: Error) => {
    failed = err;
  };
  client.on('error', onError);
  try {
    return await use(client);
  } catch (err) {
    failed ??= isStoreUnavailable(err) ? (err as Error) : undefined;
    throw err;
  } finally {
    client.off('error', onError);
    client.release(failed);
  }
}

/** Runs `use` in a transaction on a connection of its own: committed when it resolves, else rolled back. */
export function inTransaction<T>(pool: pg.Pool, use: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  return withClient(pool, async (client) => {
    try {
      await client.query('BEGIN');
      const value = await use(client);
      await client.query('COMMIT');
      return value;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    }
  });
}

/**
 * The store contract over PostgreSQL (docs/scale.md): the same reads as the embedded store, as
 * queries; writes recorded and sent in one transaction per commit (a group commit per
 * event-loop turn, or one of their own). Tables and columns are the SQLite store's, so rows
 * become records through the same functions.
 */
export function createPgContract(pool: pg.Pool): StoreContract {
  const rows = async <T = Row>(text: string, values: unknown[] = []) => (await pool.query(text, values)).rows as T[];
  const one = async <T = Row>(text: string, values: unknown[] = []) => (await rows<T>(text, values))[0];

  /** Runs each group's statements in one transaction; the caller settles the groups. */
  function run(groups: readonly (readonly PgStatement[])[]): Promise<void> {
    return inTransaction(pool, async (client) => {
      for (const group of groups)
        for (const statement of group) await client.query(statement.text, [...statement.values]);
    });
  }

  function record<T>(write: (w: Writes) => T): { value: T; statements: PgStatement[] } {
    const recorder = createPgWrites();
    const value = write(recorder.writes);
    return { value, statements: recorder.statements };
  }

  // One group commit at a time, in order: a run's `running` must never land after its result.
  const queue = createCommitQueue<{ value: unknown; statements: PgStatement[] }, unknown>({
    commit: async (items) => {
      await run(items.map((item) => item.statements));
      return items.map((item) => item.value);
    },
  });

  return {
    events: {
      get: async (id) => {
        const row = await one('SELECT * FROM events WHERE id = $1', [id]);
        return row && eventOf(row as never);
      },
      pending: async (sessionKey, limit = 1_000_000) =>
        (
          await rows('SELECT * FROM events WHERE session_key = $1 AND consumed_at IS NULL ORDER BY seq LIMIT $2', [
            sessionKey,
            limit,
          ])
        ).map((row) => eventOf(row as never)) as EventRecord[],
      countPending: async (sessionKey) =>
        (
          (await one<{ n: number }>('SELECT COUNT(*) AS n FROM events WHERE session_key = $1 AND consumed_at IS NULL', [
            sessionKey,
          ])) as { n: number }
        ).n,
      list: async (sessionKey) =>
        (await rows('SELECT * FROM events WHERE session_key = $1 ORDER BY seq', [sessionKey])).map((row) =>
          eventOf(row as never),
        ),
    },
    runs: {
      get: async (id) => {
        const row = await one('SELECT * FROM runs WHERE id = $1', [id]);
        return row && runOf(row as never);
      },
      unfinished: async () =>
        (await rows('SELECT * FROM runs WHERE summarized_at IS NULL ORDER BY seq')).map((row) => runOf(row as never)),
      list: async (filter: RunListFilter) => {
        const found = await rows<Row & { seq: number }>(
          `SELECT * FROM runs WHERE seq < $1 AND ($2::text IS NULL OR status = $2 OR ($2 = 'failed'
             AND (status IN ('error', 'timeout') OR (delivery::jsonb ->> 'status') = 'failed')))
             AND ($4::text IS NULL OR mapping_id = $4)
           ORDER BY seq DESC LIMIT $3`,
          [filter.beforeSeq ?? Number.MAX_SAFE_INTEGER, filter.status ?? null, filter.limit, filter.mapping ?? null],
        );
        return found.map((row) => ({ ...runOf(row as never), seq: row.seq })) as (RunRecord & { seq: number })[];
      },
      attempts: async (runIds) =>
        runIds.length === 0
          ? []
          : (
              await rows<AttemptRow>('SELECT * FROM run_attempts WHERE run_id = ANY($1::text[]) ORDER BY seq', [
                [...runIds],
              ])
            ).map(attemptOf),
      outcomes: async (runIds) =>
        runIds.length === 0
          ? []
          : (
              await rows<Parameters<typeof runStatusOf>[0]>(
                `SELECT id, status, delivery::jsonb ->> 'status' AS delivery FROM runs WHERE id = ANY($1::text[])`,
                [[...runIds]],
              )
            ).map(runStatusOf),
      countByStatus: async () =>
        Object.fromEntries(
          (await rows<{ status: string; n: number }>('SELECT status, COUNT(*) AS n FROM runs GROUP BY status')).map(
            (r) => [r.status, r.n],
          ),
        ),
    },
    messages: {
      recent: async (sessionKey, limit) =>
        (
          await rows<SessionMessage>(
            'SELECT role, content FROM messages WHERE session_key = $1 ORDER BY seq DESC LIMIT $2',
            [sessionKey, limit],
          )
        ).reverse(),
      has: async (sessionKey) =>
        (await one('SELECT 1 FROM messages WHERE session_key = $1 LIMIT 1', [sessionKey])) !== undefined,
      list: async (sessionKey) =>
        rows<SessionMessage>('SELECT role, content FROM messages WHERE session_key = $1 ORDER BY seq', [sessionKey]),
      ofRun: async (sessionKey, runId) =>
        rows<SessionMessage>('SELECT role, content FROM messages WHERE session_key = $1 AND run_id = $2 ORDER BY seq', [
          sessionKey,
          runId,
        ]),
      sessions: async (limit) =>
        rows<{ key: string; messages: number; lastAt: number }>(
          `SELECT session_key AS key, COUNT(*) AS messages, MAX(created_at) AS "lastAt" FROM messages
           GROUP BY session_key ORDER BY MAX(seq) DESC LIMIT $1`,
          [limit],
        ),
    },
    requests: {
      get: async (id) => {
        const row = await one('SELECT * FROM requests WHERE id = $1 ORDER BY seq DESC LIMIT 1', [id]);
        return row && requestRecordOf(row as never);
      },
      list: async (filter: RequestLogFilter) => {
        const { where, values } = requestListWhere(filter, (n) => `$${n}`, 'postgres');
        const text = `SELECT ${LISTED} FROM requests${where} ORDER BY seq DESC LIMIT $${values.length + 1}`;
        return (await rows(text, [...values, filter.limit])).map((row) =>
          requestEntryOf(row as never),
        ) as RequestLogEntry[];
      },
      countSince: async (since) =>
        (await one<{ total: number; failed: number }>(
          'SELECT COUNT(*) AS total, COALESCE(SUM((status >= 400)::int), 0)::int AS failed FROM requests WHERE received_at >= $1',
          [since],
        )) as { total: number; failed: number },
    },
    log: createPgLogTables(pool),
    failedRequests: {
      forRequest: async (requestId) => {
        const row = await one('SELECT * FROM failed_requests WHERE request_id = $1 ORDER BY seq DESC LIMIT 1', [
          requestId,
        ]);
        return row && (failedRequestOf(row as never) as FailedRequestRecord);
      },
    },
    idempotency: {
      purgeExpired: async () =>
        (await pool.query(`DELETE FROM idempotency WHERE expires_at <= ${DB_NOW_MS}`)).rowCount ?? 0,
    },
    alerts: createPgAlerts(pool),
    group: {
      write<T>(write: (w: Writes) => T): Promise<T> {
        let recorded: { value: T; statements: PgStatement[] };
        try {
          recorded = record(write);
        } catch (err) {
          return Promise.reject(err);
        }
        return queue.add(recorded) as Promise<T>;
      },
    },
    async commit(write) {
      const { value, statements } = record(write);
      await run([statements]);
      return value;
    },
  };
}
