import type { Statement } from 'better-sqlite3';
import {
  ALERT_COLUMNS,
  ALERT_SELECT,
  type AlertRepository,
  type AlertRow,
  alertListWhere,
  alertOf,
  alertRow,
} from '../alerts.js';
import type { Db } from './db.js';

/** The SQLite alerts table (docs/operations.md#alerts). */
export function createAlertRepository(db: Db): AlertRepository {
  const insert = db.prepare(
    `INSERT INTO alerts (${ALERT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
  );
  const latest = db.prepare(
    `${ALERT_SELECT} WHERE a.kind = 'firing' AND a.condition = ? AND a.source = ? ORDER BY a.seq DESC LIMIT 1`,
  );
  const listings = new Map<string, Statement<unknown[]>>();
  return {
    insert: (alert) => insert.run(...alertRow(alert)).changes === 1,
    latestFiring(condition, source) {
      const row = latest.get(condition, source) as AlertRow | undefined;
      return row && alertOf(row);
    },
    list(filter) {
      const { where, values } = alertListWhere(filter, () => '?');
      const text = `${ALERT_SELECT}${where} ORDER BY a.seq DESC LIMIT ?`;
      let statement = listings.get(text);
      if (!statement) {
        statement = db.prepare(text);
        listings.set(text, statement);
      }
      return (statement.all(...values, filter.limit) as AlertRow[]).map(alertOf);
    },
  };
}
