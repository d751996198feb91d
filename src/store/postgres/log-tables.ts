import type pg from 'pg';
import { FAILURE_BYTES_SQL } from '../failed-requests.js';
import { REQUEST_BYTES_SQL } from '../requests.js';
import type { Freed, LogTable, LogTables } from '../retention.js';
import { DB_NOW_MS } from './clock.js';

const TABLES = {
  requests: { name: 'requests', time: 'received_at', bytes: REQUEST_BYTES_SQL },
  failures: { name: 'failed_requests', time: 'created_at', bytes: FAILURE_BYTES_SQL },
} as const;

/**
 * The PostgreSQL log tables for retention passes (docs/operations.md#retention): every node
 * counts them when its pass is due (the others add rows too: no node keeps a tally), deletes
 * in bounded steps, and ages by the database's clock. Freed space is PostgreSQL's autovacuum's
 * to reuse; the files do not shrink (docs/operations.md#retention says how to shrink them).
 */
export function createPgLogTables(pool: pg.Pool): LogTables {
  const remove = async (table: LogTable, where: string, values: unknown[]): Promise<Freed> => {
    const { name, bytes } = TABLES[table];
    const { rows } = await pool.query<{ bytes: number }>(
      `DELETE FROM ${name} WHERE seq IN (SELECT seq FROM ${name} ${where}) RETURNING (${bytes})::bigint AS bytes`,
      values,
    );
    return { rows: rows.length, bytes: rows.reduce((sum, row) => sum + Number(row.bytes), 0) };
  };
  const sizeOf = async (table: LogTable): Promise<Freed> => {
    const { name, bytes } = TABLES[table];
    const { rows } = await pool.query<{ rows: number; bytes: number }>(
      `SELECT COUNT(*) AS rows, COALESCE(SUM(${bytes}), 0)::bigint AS bytes FROM ${name}`,
    );
    return { rows: Number(rows[0]?.rows ?? 0), bytes: Number(rows[0]?.bytes ?? 0) };
  };
  return {
    async size() {
      const [requests, failures] = await Promise.all([sizeOf('requests'), sizeOf('failures')]);
      return { requests, failures };
    },
    pruneOlderThan(table, maxAgeMs, limit) {
      const { time } = TABLES[table];
      return remove(table, `WHERE ${time} < ${DB_NOW_MS} - $1 ORDER BY ${time} LIMIT $2`, [maxAgeMs, limit]);
    },
    pruneOldest(table, count) {
      return remove(table, `ORDER BY ${TABLES[table].time}, seq LIMIT $1`, [count]);
    },
    async purgeExpiredKeys(limit) {
      const { rowCount } = await pool.query(
        `DELETE FROM idempotency WHERE (scope, key) IN
           (SELECT scope, key FROM idempotency WHERE expires_at <= ${DB_NOW_MS} LIMIT $1)`,
        [limit],
      );
      return rowCount ?? 0;
    },
  };
}
