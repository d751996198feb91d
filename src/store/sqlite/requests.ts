import type { Statement } from 'better-sqlite3';
import {
  LISTED,
  PRUNE_CHUNK,
  REQUEST_COLUMNS,
  type RequestLogRepository,
  type RequestRow,
  requestEntryOf,
  requestListWhere,
  requestRecordOf,
  requestRow,
} from '../requests.js';
import type { Db } from './db.js';

/** The SQLite request log. */
export function createRequestLogRepository(db: Db): RequestLogRepository {
  const insert = db.prepare(
    `INSERT INTO requests (${REQUEST_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );

  const get = db.prepare('SELECT * FROM requests WHERE id = ? ORDER BY seq DESC LIMIT 1');
  const pruneOld = db.prepare(
    `DELETE FROM requests WHERE seq IN (SELECT seq FROM requests WHERE received_at < ? ORDER BY seq LIMIT ${PRUNE_CHUNK})`,
  );
  const markReplayed = db.prepare(
    'UPDATE requests SET replayed_at = ? WHERE seq = (SELECT MAX(seq) FROM requests WHERE id = ?)',
  );
  const countSince = db.prepare(
    'SELECT COUNT(*) AS total, COALESCE(SUM(status >= 400), 0) AS failed FROM requests WHERE received_at >= ?',
  );
  const newestSeq = db.prepare('SELECT MAX(seq) AS seq FROM requests');
  const pruneBeyond = db.prepare(
    `DELETE FROM requests WHERE seq IN (SELECT seq FROM requests WHERE seq <= ? ORDER BY seq LIMIT ${PRUNE_CHUNK})`,
  );
  const listings = new Map<string, Statement<unknown[]>>();

  function chunks(statement: Statement<unknown[]>, arg: number): number {
    let total = 0;
    for (;;) {
      const { changes } = statement.run(arg);
      total += changes;
      if (changes < PRUNE_CHUNK) return total;
    }
  }

  return {
    insert(r) {
      insert.run(...requestRow(r));
    },
    list(filter) {
      const { where, values } = requestListWhere(filter, () => '?');
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
    prune(before, maxRows) {
      let pruned = chunks(pruneOld, before);
      const newest = (newestSeq.get() as { seq: number | null }).seq;
      if (newest !== null && newest > maxRows) pruned += chunks(pruneBeyond, newest - maxRows);
      return pruned;
    },
  };
}
