import type pg from 'pg';
import {
  ALERT_COLUMNS,
  ALERT_SELECT,
  type AlertRepository,
  type AlertRow,
  alertListWhere,
  alertOf,
  alertRow,
} from '../alerts.js';
import type { Async } from '../contract.js';

const PLACEHOLDERS = Array.from({ length: ALERT_COLUMNS.split(',').length }, (_, i) => `$${i + 1}`).join(', ');

/** The alerts table on PostgreSQL (docs/operations.md#alerts): the same rows as SQLite's. */
export function createPgAlerts(pool: pg.Pool): Async<AlertRepository> {
  const rows = async (text: string, values: unknown[]) => (await pool.query<AlertRow>(text, values)).rows;
  return {
    async insert(alert) {
      const { rowCount } = await pool.query(
        `INSERT INTO alerts (${ALERT_COLUMNS}) VALUES (${PLACEHOLDERS}) ON CONFLICT DO NOTHING`,
        alertRow(alert),
      );
      return rowCount === 1;
    },
    async latestFiring(condition, source) {
      const [row] = await rows(
        `${ALERT_SELECT} WHERE a.kind = 'firing' AND a.condition = $1 AND a.source = $2 ORDER BY a.seq DESC LIMIT 1`,
        [condition, source],
      );
      return row && alertOf(row);
    },
    async list(filter) {
      const { where, values } = alertListWhere(filter, (n) => `$${n}`);
      const text = `${ALERT_SELECT}${where} ORDER BY a.seq DESC LIMIT $${values.length + 1}`;
      return (await rows(text, [...values, filter.limit])).map(alertOf);
    },
  };
}
