import type { AlertCondition, AlertKind } from '../alert-views.js';

/**
 * An alert message (docs/operations.md#alerts) as stored: append only, one row per message, a
 * firing or the recovery that closes it. Two unique keys let several nodes agree on one message.
 */
export interface AlertRecord {
  readonly id: string;
  /** When it was decided (epoch milliseconds, the deciding node's clock). */
  readonly at: number;
  readonly kind: AlertKind;
  readonly condition: AlertCondition;
  readonly source: string;
  readonly count: number;
  readonly lastError?: string;
  readonly link: string;
  readonly text: string;
  /**
   * A firing's key: its condition, source and the firing before it. Two nodes that decide the same
   * firing at once write the same key, and only the first row is kept.
   */
  readonly key?: string;
  /** A recovery: the firing it closes (unique: a firing recovers once). */
  readonly recovers?: string;
}

/** A stored alert with its position, and for a firing when it was recovered. */
export interface StoredAlert extends AlertRecord {
  readonly seq: number;
  readonly recoveredAt?: number;
}

/** Which alerts a list holds. */
export interface AlertFilter {
  /** Only firings not recovered yet. */
  readonly open?: boolean;
  /** Only alerts older than this position (the cursor of the page before). */
  readonly beforeSeq?: number;
  readonly limit: number;
}

/** The alerts table (both stores): writes of their own, outside the group commit. */
export interface AlertRepository {
  /** Stores `alert` unless its `key` or `recovers` is taken; answers whether it was stored. */
  insert(alert: AlertRecord): boolean;
  /** The newest firing of `condition` and `source`, with its recovery's time when it has one. */
  latestFiring(condition: AlertCondition, source: string): StoredAlert | undefined;
  /** Newest first. */
  list(filter: AlertFilter): StoredAlert[];
}

/** A row as the database answers it (with the recovery's time joined). */
export interface AlertRow {
  seq: number;
  id: string;
  at: number;
  kind: string;
  condition: string;
  source: string;
  count: number;
  last_error: string | null;
  link: string;
  text: string;
  key: string | null;
  recovers: string | null;
  recovered_at: number | null;
}

/** The columns an alert is inserted with, in `alertRow`'s order; both stores. */
export const ALERT_COLUMNS = 'id, at, kind, condition, source, count, last_error, link, text, key, recovers';

/** An alert's values for an insert. */
export function alertRow(a: AlertRecord): unknown[] {
  return [
    a.id,
    a.at,
    a.kind,
    a.condition,
    a.source,
    a.count,
    a.lastError ?? null,
    a.link,
    a.text,
    a.key ?? null,
    a.recovers ?? null,
  ];
}

/** Every alert column, and the time of the recovery that closed a firing (`r` joined on `recovers`). */
export const ALERT_SELECT = 'SELECT a.*, r.at AS recovered_at FROM alerts a LEFT JOIN alerts r ON r.recovers = a.id';

/** A row of `alerts` as a record. */
export function alertOf(row: AlertRow): StoredAlert {
  return {
    seq: row.seq,
    id: row.id,
    at: row.at,
    kind: row.kind as AlertKind,
    condition: row.condition as AlertCondition,
    source: row.source,
    count: row.count,
    ...(row.last_error === null ? {} : { lastError: row.last_error }),
    link: row.link,
    text: row.text,
    ...(row.key === null ? {} : { key: row.key }),
    ...(row.recovers === null ? {} : { recovers: row.recovers }),
    ...(row.recovered_at === null ? {} : { recoveredAt: row.recovered_at }),
  };
}

/**
 * The WHERE clause of a list and its values; `param(n)` writes the n-th placeholder (`?` for
 * SQLite, `$n` for PostgreSQL). Columns are the joined `a` (the alert) and `r` (its recovery).
 */
export function alertListWhere(
  filter: AlertFilter,
  param: (n: number) => string,
): { where: string; values: unknown[] } {
  const clauses: string[] = [];
  const values: unknown[] = [];
  if (filter.open) clauses.push("a.kind = 'firing' AND r.id IS NULL");
  if (filter.beforeSeq !== undefined) {
    values.push(filter.beforeSeq);
    clauses.push(`a.seq < ${param(values.length)}`);
  }
  return { where: clauses.length ? ` WHERE ${clauses.join(' AND ')}` : '', values };
}
