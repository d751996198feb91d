import type pg from 'pg';
import { LOG_TABLE_SQL as TABLES } from '../log-table-sql.js';
import type { Freed, LogTable, LogTables } from '../retention.js';
import { DB_NOW_MS } from './clock.js';

/**
 * The PostgreSQL log tables for retention passes (docs/operations.md#retention): every node
 * counts them when its pass is due (the others add rows too: no node keeps a tally), deletes
 * in bounded steps, and ages by the database's clock. Freed space is PostgreSQL's autovacuum's
 * to reuse; the files do not shrink (docs/operations.md#retention says how to shrink them).
 */
export function createPgLogTables(pool: pg.Pool): LogTables {
  /** Deletes the rows of `table` that `rest` (a condition, an order and a limit) picks. */
  const remove = async (table: LogTable, rest: string, values: unknown[]): Promise<Freed> => {
    const { name, bytes, where } = TABLES[table];
    const { rows } = await pool.query<{ bytes: number }>(
      `DELETE FROM ${name} WHERE seq IN (SELECT seq FROM ${name} WHERE ${where} ${rest}) RETURNING (${bytes})::bigint AS bytes`,
      values,
    );
    return { rows: rows.length, bytes: rows.reduce((sum, row) => sum + Number(row.bytes), 0) };
  };
  /** The tables' rows and bytes, each table of one scan counted apart (`FILTER`). */
  const sizesOf = async (of: readonly LogTable[]): Promise<Freed[]> => {
    const name = TABLES[of[0] as LogTable].name;
    const columns = of.map((table, i) => {
      const { bytes, where } = TABLES[table];
      return `COUNT(*) FILTER (WHERE ${where}) AS rows${i}, COALESCE(SUM(${bytes}) FILTER (WHERE ${where}), 0)::bigint AS bytes${i}`;
    });
    const { rows } = await pool.query<Record<string, string>>(`SELECT ${columns.join(', ')} FROM ${name}`);
    return of.map((_, i) => ({ rows: Number(rows[0]?.[`rows${i}`] ?? 0), bytes: Number(rows[0]?.[`bytes${i}`] ?? 0) }));
  };
  return {
    async size() {
      const [[requests, refused], [failures]] = await Promise.all([
        sizesOf(['requests', 'refused']),
        sizesOf(['failures']),
      ]);
      return { requests: requests as Freed, refused: refused as Freed, failures: failures as Freed };
    },
    pruneOlderThan(table, maxAgeMs, limit) {
      const { time } = TABLES[table];
      return remove(table, `AND ${time} < ${DB_NOW_MS} - $1 ORDER BY ${time} LIMIT $2`, [maxAgeMs, limit]);
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
