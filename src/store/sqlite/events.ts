import { EVENT_COLUMNS, type EventRepository, type EventRow, eventOf, eventRow } from '../events.js';
import type { Db } from './db.js';

/** The SQLite event repository. */
export function createEventRepository(db: Db): EventRepository {
  const insert = db.prepare(
    `INSERT INTO events (${EVENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
  );
  const pending = db.prepare('SELECT * FROM events WHERE session_key = ? AND consumed_at IS NULL ORDER BY seq LIMIT ?');
  const list = db.prepare('SELECT * FROM events WHERE session_key = ? ORDER BY seq DESC LIMIT ?');
  const consume = db.prepare('UPDATE events SET consumed_at = ? WHERE id = ? AND consumed_at IS NULL');
  const countPending = db.prepare('SELECT COUNT(*) AS n FROM events WHERE session_key = ? AND consumed_at IS NULL');
  const get = db.prepare('SELECT * FROM events WHERE id = ?');

  return {
    insert(event) {
      insert.run(...eventRow(event));
    },
    get(id) {
      const row = get.get(id) as EventRow | undefined;
      return row && eventOf(row);
    },
    pending(sessionKey, limit = Number.MAX_SAFE_INTEGER) {
      return (pending.all(sessionKey, limit) as EventRow[]).map(eventOf);
    },
    countPending(sessionKey) {
      return (countPending.get(sessionKey) as { n: number }).n;
    },
    list(sessionKey, limit) {
      return (list.all(sessionKey, limit) as EventRow[]).reverse().map(eventOf);
    },
    markConsumed: db.transaction((ids: readonly string[], at: number) => {
      for (const id of ids) consume.run(at, id);
    }),
  };
}
