import type pg from 'pg';
import { type AttemptRow, attemptOf } from '../attempts.js';
import { type StoreContract, withinShare } from '../contract.js';
import type { EventRecord } from '../events.js';
import { eventOf } from '../events.js';
import type { FailedRequestRecord } from '../failed-requests.js';
import { failedRequestOf } from '../failed-requests.js';
import { SESSIONS_SQL, type SessionMessage } from '../messages.js';
import type { RequestLogEntry, RequestLogFilter } from '../requests.js';
import { LISTED, requestEntryOf, requestListWhere, requestRecordOf } from '../requests.js';
import { type RunListFilter, type RunRecord, runOf, runStatusOf, UNFINISHED_COLUMNS, unfinishedOf } from '../runs.js';

/**
 * The PostgreSQL store's reads (docs/scale.md): the embedded store's, as queries. Tables and
 * columns are the SQLite store's, so rows become records through the same functions.
 */

type Row = Record<string, unknown>;

/** The rows `text` answers. */
export async function rowsOf<T = Row>(pool: pg.Pool, text: string, values: unknown[] = []): Promise<T[]> {
  return (await pool.query(text, values)).rows as T[];
}

/** The first row `text` answers, if any. */
export async function firstRow<T = Row>(pool: pg.Pool, text: string, values: unknown[] = []): Promise<T | undefined> {
  return (await rowsOf<T>(pool, text, values))[0];
}

/** A session's events. */
export function pgEventReads(pool: pg.Pool): StoreContract['events'] {
  return {
    get: async (id) => {
      const row = await firstRow(pool, 'SELECT * FROM events WHERE id = $1', [id]);
      return row && eventOf(row as never);
    },
    pending: async (sessionKey, limit = 1_000_000) =>
      (
        await rowsOf(
          pool,
          'SELECT * FROM events WHERE session_key = $1 AND consumed_at IS NULL ORDER BY seq LIMIT $2',
          [sessionKey, limit],
        )
      ).map((row) => eventOf(row as never)) as EventRecord[],
    countPending: async (sessionKey) =>
      (
        (await firstRow<{ n: number }>(
          pool,
          'SELECT COUNT(*) AS n FROM events WHERE session_key = $1 AND consumed_at IS NULL',
          [sessionKey],
        )) as { n: number }
      ).n,
    list: async (sessionKey, limit) =>
      (
        await rowsOf(pool, 'SELECT * FROM events WHERE session_key = $1 ORDER BY seq DESC LIMIT $2', [
          sessionKey,
          limit,
        ])
      )
        .reverse()
        .map((row) => eventOf(row as never)),
  };
}

/** The runs, their tries and their outcomes. */
export function pgRunReads(pool: pg.Pool): StoreContract['runs'] {
  return {
    get: async (id) => {
      const row = await firstRow(pool, 'SELECT * FROM runs WHERE id = $1', [id]);
      return row && runOf(row as never);
    },
    unfinished: async () =>
      (await rowsOf(pool, `SELECT ${UNFINISHED_COLUMNS} FROM runs WHERE summarized_at IS NULL ORDER BY seq`)).map(
        (row) => unfinishedOf(row as never),
      ),
    list: async (filter: RunListFilter) => {
      const found = await rowsOf<Row & { seq: number }>(
        pool,
        `SELECT * FROM runs WHERE seq < $1 AND seq > $5 AND ($2::text IS NULL OR status = $2 OR ($2 = 'failed'
           AND (status IN ('error', 'timeout') OR (delivery::jsonb ->> 'status') = 'failed')))
           AND ($4::text IS NULL OR mapping_id = $4)
         ORDER BY seq DESC LIMIT $3`,
        [
          filter.beforeSeq ?? Number.MAX_SAFE_INTEGER,
          filter.status ?? null,
          filter.limit,
          filter.mapping ?? null,
          filter.afterSeq ?? 0,
        ],
      );
      return found.map((row) => ({ ...runOf(row as never), seq: row.seq })) as (RunRecord & { seq: number })[];
    },
    attempts: async (runIds) =>
      runIds.length === 0
        ? []
        : (
            await rowsOf<AttemptRow>(pool, 'SELECT * FROM run_attempts WHERE run_id = ANY($1::text[]) ORDER BY seq', [
              [...runIds],
            ])
          ).map(attemptOf),
    outcomes: async (runIds) =>
      runIds.length === 0
        ? []
        : (
            await rowsOf<Parameters<typeof runStatusOf>[0]>(
              pool,
              `SELECT id, status, delivery::jsonb ->> 'status' AS delivery FROM runs WHERE id = ANY($1::text[])`,
              [[...runIds]],
            )
          ).map(runStatusOf),
    countByStatus: withinShare(async () =>
      Object.fromEntries(
        (
          await rowsOf<{ status: string; n: number }>(pool, 'SELECT status, COUNT(*) AS n FROM runs GROUP BY status')
        ).map((r) => [r.status, r.n]),
      ),
    ),
  };
}

/** The sessions' messages. */
export function pgMessageReads(pool: pg.Pool): StoreContract['messages'] {
  return {
    recent: async (sessionKey, limit) =>
      (
        await rowsOf<SessionMessage>(
          pool,
          'SELECT role, content FROM messages WHERE session_key = $1 ORDER BY seq DESC LIMIT $2',
          [sessionKey, limit],
        )
      ).reverse(),
    has: async (sessionKey) =>
      (await firstRow(pool, 'SELECT 1 FROM messages WHERE session_key = $1 LIMIT 1', [sessionKey])) !== undefined,
    ofRun: async (sessionKey, runId) =>
      rowsOf<SessionMessage>(
        pool,
        'SELECT role, content FROM messages WHERE session_key = $1 AND run_id = $2 ORDER BY seq',
        [sessionKey, runId],
      ),
    sessions: async (limit, within) =>
      rowsOf<{ key: string; messages: number; lastAt: number }>(pool, SESSIONS_SQL, [within, limit]),
  };
}

/** The request log's records, listed and counted. */
export function pgRequestReads(pool: pg.Pool): StoreContract['requests'] {
  return {
    get: async (id) => {
      const row = await firstRow(pool, 'SELECT * FROM requests WHERE id = $1 ORDER BY seq DESC LIMIT 1', [id]);
      return row && requestRecordOf(row as never);
    },
    list: async (filter: RequestLogFilter) => {
      const { where, values } = requestListWhere(filter, (n) => `$${n}`, 'postgres');
      const text = `SELECT ${LISTED} FROM requests${where} ORDER BY seq DESC LIMIT $${values.length + 1}`;
      return (await rowsOf(pool, text, [...values, filter.limit])).map((row) =>
        requestEntryOf(row as never),
      ) as RequestLogEntry[];
    },
    countSince: async (since) =>
      (await firstRow<{ total: number; failed: number }>(
        pool,
        'SELECT COUNT(*) AS total, COALESCE(SUM((status >= 400)::int), 0)::int AS failed FROM requests WHERE received_at >= $1',
        [since],
      )) as { total: number; failed: number },
  };
}

/** The kept failures of requests. */
export function pgFailedRequestReads(pool: pg.Pool): StoreContract['failedRequests'] {
  return {
    forRequest: async (requestId) => {
      const row = await firstRow(
        pool,
        'SELECT * FROM failed_requests WHERE request_id = $1 ORDER BY seq DESC LIMIT 1',
        [requestId],
      );
      return row && (failedRequestOf(row as never) as FailedRequestRecord);
    },
  };
}
