import type Database from 'better-sqlite3';
import type { GroupCommit } from '../group-commit.js';
import { LOG_TABLE_SQL } from '../log-table-sql.js';
import type { Freed, LogTable, LogTables } from '../retention.js';
import type { BodyLog } from './bodies.js';
import { type Db, pageBytesOf } from './db.js';

/** The tally at a moment, to go back to (undefined: not counted yet). */
export type TallyMark = Readonly<Record<LogTable, { rows: number; bytes: number }>> | undefined;

/**
 * The rows and bytes of the log tables, kept as rows are inserted and deleted: counted once (the
 * first retention pass reads every row's size), then kept up to date, so that no pass scans the
 * tables again. One gateway writes the file, so the count stays exact: a transaction that rolls
 * back takes its rows' counts back with it (store.ts).
 */
export interface LogTally {
  /** Counts a row inserted (a no-op until the tables have been counted: the count includes it). */
  add(table: LogTable, bytes: number): void;
  /** Counts rows deleted. */
  remove(table: LogTable, rows: number, bytes: number): void;
  /** The sizes, counted the first time. */
  sizes(
    count: () => Record<LogTable, { rows: number; bytes: number }>,
  ): Record<LogTable, { rows: number; bytes: number }>;
  /** What it counts now, for a transaction to go back to if it rolls back. */
  mark(): TallyMark;
  /** Goes back to `mark`: the rows added and removed since were rolled back. */
  restore(mark: TallyMark): void;
}

/** A tally not counted yet. */
export function createLogTally(): LogTally {
  let counted: Record<LogTable, { rows: number; bytes: number }> | undefined;
  return {
    add(table, bytes) {
      if (!counted) return;
      counted[table].rows += 1;
      counted[table].bytes += bytes;
    },
    remove(table, rows, bytes) {
      if (!counted) return;
      counted[table].rows = Math.max(0, counted[table].rows - rows);
      counted[table].bytes = Math.max(0, counted[table].bytes - bytes);
    },
    sizes(count) {
      counted ??= count();
      return counted;
    },
    mark: () =>
      counted && {
        requests: { ...counted.requests },
        refused: { ...counted.refused },
        failures: { ...counted.failures },
      },
    restore(mark) {
      counted = mark && {
        requests: { ...mark.requests },
        refused: { ...mark.refused },
        failures: { ...mark.failures },
      };
    },
  };
}

/** Free space given back per step: a few MiB of pages moved at a time, between commits. */
const VACUUM_STEP_BYTES = 4 * 1024 * 1024;

/**
 * The SQLite log tables for retention passes (docs/operations.md#retention): each delete runs in
 * the next group commit (at most `limit` rows: a step never holds the writer long), and free
 * pages go back to the file system with `PRAGMA incremental_vacuum` (the file is made with
 * `auto_vacuum = INCREMENTAL`, see db.ts).
 */
export function createSqliteLogTables(
  db: Db,
  tally: LogTally,
  group: GroupCommit<unknown>,
  now: () => number,
  bodies: BodyLog,
): LogTables {
  const of = {
    requests: statementsOf(db, 'requests'),
    refused: statementsOf(db, 'refused'),
    failures: statementsOf(db, 'failures'),
  };
  const purgeKeys = db.prepare(
    'DELETE FROM idempotency WHERE (scope, key) IN (SELECT scope, key FROM idempotency WHERE expires_at <= ? LIMIT ?)',
  );
  const anyExpired = db.prepare('SELECT 1 FROM idempotency WHERE expires_at <= ? LIMIT 1');
  const NOTHING: Freed = { rows: 0, bytes: 0 };
  // Bodies are in the body log in the order of their rows: the oldest row's is the first still read.
  const firstBody = db.prepare('SELECT body_at FROM requests WHERE body_at IS NOT NULL ORDER BY seq LIMIT 1');
  /** Deletes the body log's segments that no record reads any more. */
  const releaseBodies = () => {
    const first = firstBody.get() as { body_at: number } | undefined;
    bodies.releaseBefore(first ? first.body_at : Number.POSITIVE_INFINITY);
  };
  const count = () => ({
    requests: of.requests.count.get() as { rows: number; bytes: number },
    refused: of.refused.count.get() as { rows: number; bytes: number },
    failures: of.failures.count.get() as { rows: number; bytes: number },
  });
  /** Deletes the rows `step` picks with `values`, in the next group commit; the tally follows. */
  const remove = async (table: LogTable, step: Step, ...values: number[]): Promise<Freed> => {
    const freed = await group.write(() => {
      // The same rows twice in one transaction: sized by a read, then deleted (see statementsOf).
      const { bytes } = step.size.get(...values) as { bytes: number };
      const rows = step.remove.run(...values).changes;
      tally.remove(table, rows, bytes);
      return { rows, bytes };
    });
    if (table !== 'failures' && freed.rows > 0) releaseBodies();
    return freed;
  };

  return {
    async size() {
      const { requests, refused, failures } = tally.sizes(count);
      return { requests: { ...requests }, refused: { ...refused }, failures: { ...failures } };
    },
    // Nothing to delete is found by a read (an index's first entry): no write, so that an idle
    // gateway's passes never start its checkpoint thread (docs/operations.md#commits-and-checkpoints).
    async pruneOlderThan(table, maxAgeMs, limit) {
      const before = now() - maxAgeMs;
      if (of[table].anyAged.get(before) === undefined) return NOTHING;
      return remove(table, of[table].aged, before, limit);
    },
    pruneOldest(table, rows) {
      return remove(table, of[table].first, rows);
    },
    async purgeExpiredKeys(limit) {
      const at = now();
      if (anyExpired.get(at) === undefined) return 0;
      return group.write(() => purgeKeys.run(at, limit).changes);
    },
    vacuum: (keepBytes, maxBytes) => vacuumFree(db, group, keepBytes, maxBytes - bodies.bytes()),
  };
}

/** One step of a pass: the bytes of the rows it deletes, and their delete (the same values for both). */
interface Step {
  readonly size: Database.Statement;
  readonly remove: Database.Statement;
}

/**
 * The statements of one log table's retention (its bytes count a request's body in the body log
 * as in its row). A step's rows are picked by the same ordered query twice, `seq` breaking ties
 * so that both pick the same rows: summed, then deleted. A `DELETE … RETURNING` of each row's
 * bytes cost twice the delete alone (2.2 against 1.1 µs a row, 1,000-row steps); the sum and the
 * delete cost 1.4.
 */
function statementsOf(db: Db, table: LogTable) {
  const { name, time, where } = LOG_TABLE_SQL[table];
  const bytes =
    name === 'requests' ? `COALESCE(body_len, 0) + ${LOG_TABLE_SQL[table].bytes}` : LOG_TABLE_SQL[table].bytes;
  const step = (picked: string): Step => ({
    size: db.prepare(`SELECT COALESCE(SUM(${bytes}), 0) AS bytes FROM ${name} WHERE seq IN (${picked})`),
    remove: db.prepare(`DELETE FROM ${name} WHERE seq IN (${picked})`),
  });
  return {
    count: db.prepare(`SELECT COUNT(*) AS rows, COALESCE(SUM(${bytes}), 0) AS bytes FROM ${name} WHERE ${where}`),
    anyAged: db.prepare(`SELECT 1 FROM ${name} WHERE ${where} AND ${time} < ? LIMIT 1`),
    aged: step(`SELECT seq FROM ${name} WHERE ${where} AND ${time} < ? ORDER BY ${time}, seq LIMIT ?`),
    first: step(`SELECT seq FROM ${name} WHERE ${where} ORDER BY ${time}, seq LIMIT ?`),
  };
}

/**
 * Gives free pages back to the file system a step at a time, keeping `keepBytes` of them for the
 * next rows as long as the file stays within `maxBytesLeft` (the log's bound less the body log's
 * segments: the bound holds for both together). Answers the pages given.
 */
async function vacuumFree(
  db: Db,
  group: GroupCommit<unknown>,
  keepBytes: number,
  maxBytesLeft: number,
): Promise<number> {
  if (db.pragma('auto_vacuum', { simple: true }) !== 2) return 0;
  const maxFileBytes = Math.max(0, maxBytesLeft);
  const pageBytes = pageBytesOf(db);
  const pages = () => db.pragma('page_count', { simple: true }) as number;
  let given = 0;
  for (;;) {
    const free = db.pragma('freelist_count', { simple: true }) as number;
    // Free pages the next rows will take, as long as they keep the file within its bound.
    const room = Math.max(0, Math.floor(maxFileBytes / pageBytes) - (pages() - free));
    const keep = Math.min(Math.ceil(keepBytes / pageBytes), room);
    if (free <= keep) return given;
    const step = Math.min(free - keep, Math.ceil(VACUUM_STEP_BYTES / pageBytes));
    await group.write(() => db.pragma(`incremental_vacuum(${step})`));
    const left = db.pragma('freelist_count', { simple: true }) as number;
    given += free - left;
    if (left >= free) return given;
  }
}
