import type { Statement } from 'better-sqlite3';
import { logTableOf } from '../log-table-sql.js';
import {
  LISTED,
  REQUEST_COLUMNS,
  type RequestLogRepository,
  type RequestRow,
  requestEntryOf,
  requestListWhere,
  requestRecordOf,
  requestRow,
  requestRowBytes,
} from '../requests.js';
import type { Db } from './db.js';
import type { LogTally } from './log-tables.js';

/** The SQLite request log; pruned by the retention passes (log-tables.ts). */
export function createRequestLogRepository(db: Db, tally: LogTally): RequestLogRepository {
  const insert = db.prepare(
    `INSERT INTO requests (${REQUEST_COLUMNS}) VALUES (${REQUEST_COLUMNS.replace(/\w+/g, '?')})`,
  );
  const get = db.prepare('SELECT * FROM requests WHERE id = ? ORDER BY seq DESC LIMIT 1');
  const markReplayed = db.prepare(
    'UPDATE requests SET replayed_at = ? WHERE seq = (SELECT MAX(seq) FROM requests WHERE id = ?)',
  );
  const countSince = db.prepare(
    'SELECT COUNT(*) AS total, COALESCE(SUM(status >= 400), 0) AS failed FROM requests WHERE received_at >= ?',
  );
  const listings = new Map<string, Statement<unknown[]>>();
  const seqRange = db.prepare('SELECT MIN(seq) AS oldest, MAX(seq) AS newest FROM requests');

  return {
    insert(r) {
      const row = requestRow(r);
      insert.run(...row);
      tally.add(logTableOf(r), requestRowBytes(row));
    },
    list(filter) {
      const { where, values } = requestListWhere(filter, () => '?', 'sqlite');
      const sql = `SELECT ${LISTED} FROM requests${where} ORDER BY seq DESC LIMIT ?`;
      let statement = listings.get(sql);
      if (!statement) {
        statement = db.prepare(sql);
        listings.set(sql, statement);
      }
      return (statement.all(...values, filter.limit) as RequestRow[]).map(requestEntryOf);
    },
    get(id) {
      const row = get.get(id) as RequestRow | undefined;
      return row && requestRecordOf(row);
    },
    countSince(since) {
      return countSince.get(since) as { total: number; failed: number };
    },
    markReplayed(id, at) {
      markReplayed.run(at, id);
    },
    seqRange() {
      const range = seqRange.get() as { oldest: number | null; newest: number | null };
      return range.oldest === null || range.newest === null
        ? undefined
        : { oldest: range.oldest, newest: range.newest };
    },
  };
}
