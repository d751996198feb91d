import type { Statement } from 'better-sqlite3';
import { logTableOf } from '../log-table-sql.js';
import {
  LISTED,
  likePattern,
  REQUEST_COLUMNS,
  type RequestLogEntry,
  type RequestLogFilter,
  type RequestLogRepository,
  type RequestRow,
  requestEntryOf,
  requestListWhere,
  requestRecordOf,
  requestRow,
  requestRowBytes,
} from '../requests.js';
import type { BodyLog } from './bodies.js';
import type { Db } from './db.js';
import type { LogTally } from './log-tables.js';
import { bodyMatcher, findInBodies, type SearchCandidate } from './search.js';

const EMPTY = Buffer.alloc(0);
/** A row's body where the body log keeps it (bodies.ts); null for a record stored before it. */
type BodyPlace = { body_at: number | null; body_len: number | null };

/**
 * The SQLite request log; pruned by the retention passes (log-tables.ts). Bodies go to the body
 * log (bodies.ts), the row keeps where.
 */
export function createRequestLogRepository(db: Db, tally: LogTally, bodies: BodyLog): RequestLogRepository {
  const columns = `${REQUEST_COLUMNS}, body_at, body_len`;
  const insert = db.prepare(`INSERT INTO requests (${columns}) VALUES (${columns.replace(/\w+/g, '?')})`);
  const get = db.prepare('SELECT * FROM requests WHERE id = ? ORDER BY seq DESC LIMIT 1');
  const markReplayed = db.prepare(
    'UPDATE requests SET replayed_at = ? WHERE seq = (SELECT MAX(seq) FROM requests WHERE id = ?)',
  );
  const countSince = db.prepare(
    'SELECT COUNT(*) AS total, COALESCE(SUM(status >= 400), 0) AS failed FROM requests WHERE received_at >= ?',
  );
  const listings = new Map<string, Statement<unknown[]>>();
  const statementOf = (sql: string) => {
    let statement = listings.get(sql);
    if (!statement) {
      statement = db.prepare(sql);
      listings.set(sql, statement);
    }
    return statement;
  };
  const listedBySeq = db.prepare(
    `SELECT ${LISTED} FROM requests WHERE seq IN (SELECT value FROM json_each(?)) ORDER BY seq DESC`,
  );
  /**
   * A search (docs/runtime.md#request-log-and-replay): the id, the event type and a body stored
   * in the row are matched by SQLite; bodies in the body log are read a group of rows at a time
   * and matched here, alike (search.ts). Newest first, `filter.limit` at most.
   */
  const search = (filter: RequestLogFilter, text: string): RequestLogEntry[] => {
    const { where, values } = requestListWhere({ ...filter, search: undefined }, () => '?', 'sqlite');
    // One row of JSON for all the candidates: fetched one by one, a row cost more than its body's scan.
    const scan = statementOf(`SELECT json_group_array(json_array(seq, body_at, body_len, matched)) AS rows FROM (
      SELECT seq, body_at, body_len, (id = ? OR event_type LIKE ? ESCAPE '\\'
        OR (body_at IS NULL AND CAST(body AS TEXT) LIKE ? ESCAPE '\\')) AS matched FROM requests${where}
      ORDER BY seq DESC)`);
    const pattern = likePattern(text);
    const { rows } = scan.get(text, pattern, pattern, ...values) as { rows: string };
    const hits = findInBodies(JSON.parse(rows) as SearchCandidate[], bodies, bodyMatcher(text), filter.limit);
    if (hits.length === 0) return [];
    return (listedBySeq.all(JSON.stringify(hits)) as RequestRow[]).map(requestEntryOf);
  };
  const seqRange = db.prepare('SELECT MIN(seq) AS oldest, MAX(seq) AS newest FROM requests');

  return {
    insert(r) {
      const row = requestRow(r);
      const bytes = requestRowBytes(row);
      const { body } = r;
      const at = body.length === 0 ? null : bodies.append(body);
      // Outside a transaction the insert commits by itself: its body is written first.
      if (at !== null && !db.inTransaction) bodies.flush();
      row[11] = EMPTY;
      insert.run(...row, at, at === null ? null : body.length);
      tally.add(logTableOf(r), bytes);
    },
    list(filter) {
      if (filter.search !== undefined) return search(filter, filter.search);
      const { where, values } = requestListWhere(filter, () => '?', 'sqlite');
      const sql = `SELECT ${LISTED} FROM requests${where} ORDER BY seq DESC LIMIT ?`;
      return (statementOf(sql).all(...values, filter.limit) as RequestRow[]).map(requestEntryOf);
    },
    get(id) {
      const row = get.get(id) as (RequestRow & BodyPlace) | undefined;
      if (!row) return undefined;
      if (row.body_at !== null) row.body = bodies.read(row.body_at, row.body_len ?? 0);
      return requestRecordOf(row);
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
