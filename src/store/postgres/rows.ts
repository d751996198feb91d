import { EVENT_COLUMNS } from '../events.js';
import { IDEMPOTENCY_COLUMNS } from '../idempotency.js';
import { REQUEST_COLUMNS } from '../requests.js';
import { RUN_COLUMNS } from '../runs.js';
import { DB_NOW_MS, onDbClock } from './clock.js';
import { RUNS_CHANNEL } from './leases.js';

/** One statement of a PostgreSQL commit. */
export interface PgStatement {
  readonly text: string;
  readonly values: readonly unknown[];
}

/**
 * The PostgreSQL sink's batch inserts: one array per column (`unnest`), so that a group commit is
 * one statement per table whatever its size. Columns and values are the embedded store's
 * (`eventRow`, `runRow`, `requestRow`, `idempotencyRow`); flags arrive as 0/1.
 */

export const EVENTS_INSERT = `INSERT INTO events (${EVENT_COLUMNS})
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::boolean[], $6::text[], $7::text[],
    $8::bigint[])`;

export const RUNS_INSERT = `INSERT INTO runs (${RUN_COLUMNS}, status)
  SELECT *, 'queued' FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
    $7::integer[], $8::text[], $9::boolean[], $10::text[], $11::text[], $12::boolean[], $13::text[], $14::text[],
    $15::bigint[], $16::text[])`;

const REQUEST_NAMES = REQUEST_COLUMNS.split(',').map((name) => name.trim());

/**
 * Inserts request log records. Their times are the database's clock (docs/scale.md): each record's
 * `received_at`, stamped by a node, is moved by how far that node's clock is from the database's
 * when the statement is made (`$26`, the node's clock then; see `onDbClock`), so that a node whose
 * clock is wrong neither has its records pruned early nor keeps them past newer ones.
 */
export const REQUESTS_INSERT = `INSERT INTO requests (${REQUEST_COLUMNS})
  SELECT ${REQUEST_NAMES.map((name) => (name === 'received_at' ? onDbClock('t.received_at', '$26::bigint', 'clock.now') : `t.${name}`)).join(', ')}
  FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::integer[], $7::text[],
    $8::text[], $9::text[], $10::integer[], $11::text[], $12::bytea[], $13::integer[], $14::boolean[],
    $15::boolean[], $16::text[], $17::text[], $18::boolean[], $19::text[], $20::boolean[], $21::boolean[], $22::text[],
    $23::text[], $24::integer[], $25::text[]) AS t(${REQUEST_COLUMNS}),
    (SELECT ${DB_NOW_MS} AS now) AS clock`;

/** The parameters of REQUESTS_INSERT: the records' columns, and this node's clock now. */
export const requestsInsertValues = (rows: readonly (readonly unknown[])[], nodeNowMs: number): unknown[] => [
  ...transpose(rows),
  nodeNowMs,
];

/**
 * Inserts the keys not held; an expired key is taken over. Returns the keys taken. A key's time
 * and expiry are the database's clock (its lifetime is the row's `expires_at - created_at`).
 */
export const IDEMPOTENCY_INSERT = `INSERT INTO idempotency (${IDEMPOTENCY_COLUMNS})
  SELECT t.scope, t.key, t.body_hash, t.status, t.response, clock.now, clock.now + (t.expires_at - t.created_at)
  FROM unnest($1::text[], $2::text[], $3::text[], $4::integer[], $5::text[], $6::bigint[], $7::bigint[])
    AS t(scope, key, body_hash, status, response, created_at, expires_at),
    (SELECT ${DB_NOW_MS} AS now) AS clock
  ON CONFLICT (scope, key) DO UPDATE SET body_hash = EXCLUDED.body_hash, status = EXCLUDED.status,
    response = EXCLUDED.response, created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
    WHERE idempotency.expires_at <= EXCLUDED.created_at
  RETURNING scope, key`;

/** `$1, $2, …, $n`: the placeholders of a one-row insert. */
export const placeholders = (n: number) => Array.from({ length: n }, (_, i) => `$${i + 1}`).join(', ');

/**
 * A value as PostgreSQL takes it: its `text` cannot hold U+0000, which becomes U+FFFD (the
 * replacement character) instead of failing the commit; SQLite keeps it as sent.
 */
export const pgValue = (value: unknown): unknown =>
  typeof value === 'string' && value.includes('\u0000') ? value.replaceAll('\u0000', '\uFFFD') : value;

/**
 * Inserts as one statement (`WITH a AS (INSERT …), b AS (INSERT …) SELECT …`), their parameters
 * renumbered after one another; it notifies the nodes when it queues `runs`.
 */
export function oneStatement(statements: readonly PgStatement[], runs: number): { text: string; values: unknown[] } {
  const values: unknown[] = [];
  const parts = statements.map((statement, i) => {
    const offset = values.length;
    values.push(...statement.values);
    return `w${i} AS (${statement.text.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + offset}`)})`;
  });
  const tail = runs > 0 ? `SELECT pg_notify('${RUNS_CHANNEL}', '${runs}')` : 'SELECT 1';
  return { text: `WITH ${parts.join(', ')} ${tail}`, values };
}

/** Rows of columns → columns of rows, the parameters of an `unnest` insert. */
export function transpose(rows: readonly (readonly unknown[])[]): unknown[][] {
  const width = rows[0]?.length ?? 0;
  return Array.from({ length: width }, (_, c) => rows.map((row) => pgValue(row[c])));
}
