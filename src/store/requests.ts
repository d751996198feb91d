import type { RequestLogRecord } from '../actions/index.js';
import type { CredentialMark } from '../headers.js';
import { receiptColumn, receiptOfColumn } from './receipts.js';

export type { RequestLogRecord } from '../actions/index.js';

/** A listed record: no body (and no receipt), and its position for the next page. */
export type RequestLogEntry = Omit<RequestLogRecord, 'body'> & {
  readonly seq: number;
  /** When a replay of it was accepted. */
  readonly replayedAt?: number;
};

export interface RequestLogFilter {
  readonly path?: string;
  /** The mapping that took it (its id). */
  readonly mapping?: string;
  /** An exact status (`500`) or a class (`5`, from `5xx`). */
  readonly status?: { readonly exact: number } | { readonly class: number };
  /** Only requests answered 4xx or 5xx. */
  readonly failed?: boolean;
  /** Received at or after (epoch ms). */
  readonly since?: number;
  /** Received before (epoch ms). */
  readonly until?: number;
  /** An exact event type. */
  readonly eventType?: string;
  /**
   * A request id (exact), or text found (case-insensitively for ASCII letters) in the event type
   * or the body as stored (at most `hooks.log.maxBodyBytes`).
   */
  readonly search?: string;
  /** Only records refused at the door (true), or only authenticated ones (false). */
  readonly refused?: boolean;
  /** Only records older than this position (the cursor of the page before). */
  readonly beforeSeq?: number;
  /** Only records newer than this position (a window of a search, src/store/sqlite/search.ts). */
  readonly afterSeq?: number;
  /** Only records never replayed successfully (false), or only those replayed (true). */
  readonly replayed?: boolean;
  /** False: leave out the records of replays. */
  readonly replays?: boolean;
  readonly limit: number;
}

export interface RequestLogRepository {
  insert(record: RequestLogRecord): void;
  /** Newest first. */
  list(filter: RequestLogFilter): RequestLogEntry[];
  /** The newest record with this id. */
  get(id: string): (RequestLogRecord & { readonly seq: number }) | undefined;
  /** Requests received since `since` (epoch ms): all, and those answered 4xx or 5xx. */
  countSince(since: number): { total: number; failed: number };
  /** Marks the newest record with this id replayed. */
  markReplayed(id: string, at: number): void;
  /** The positions of the oldest and the newest record; undefined when the log is empty. */
  seqRange(): { readonly oldest: number; readonly newest: number } | undefined;
}

/** A row as the database answers it. */
export interface RequestRow {
  seq: number;
  id: string;
  received_at: number;
  path: string;
  url: string;
  mapping_id: string | null;
  status: number;
  code: string | null;
  event_ids: string | null;
  run_ids: string | null;
  duration_ms: number;
  headers: string;
  body?: Buffer;
  body_bytes: number;
  truncated: number | boolean;
  redacted: number | boolean;
  replay_of: string | null;
  replayed_at: number | null;
  forced: number | boolean;
  /** Only when the whole row is read (`get`). */
  receipt?: string | null;
  client_address: string | null;
  authenticated: number | boolean;
  body_whole: number | boolean;
  reason: string | null;
  credentials: string | null;
  more_refused: number | null;
  event_type: string | null;
}

const ids = (json: string | null): string[] => (json === null ? [] : (JSON.parse(json) as string[]));
const NO_CREDENTIALS: Readonly<Record<string, CredentialMark>> = Object.freeze({});

/** A row of `requests` (SQLite's or PostgreSQL's) as a listed record. */
export function requestEntryOf(row: RequestRow): RequestLogEntry {
  return {
    seq: row.seq,
    id: row.id,
    receivedAt: row.received_at,
    path: row.path,
    url: row.url,
    ...(row.client_address === null ? {} : { client: row.client_address }),
    ...(row.mapping_id === null ? {} : { mappingId: row.mapping_id }),
    ...(row.event_type === null ? {} : { eventType: row.event_type }),
    status: row.status,
    ...(row.code === null ? {} : { code: row.code }),
    ...(row.reason === null ? {} : { reason: row.reason }),
    eventIds: ids(row.event_ids),
    runIds: ids(row.run_ids),
    durationMs: row.duration_ms,
    headers: JSON.parse(row.headers) as Record<string, string>,
    credentials:
      row.credentials === null ? NO_CREDENTIALS : (JSON.parse(row.credentials) as Record<string, CredentialMark>),
    authenticated: Boolean(row.authenticated),
    bodyBytes: row.body_bytes,
    truncated: Boolean(row.truncated),
    redacted: Boolean(row.redacted),
    // Records from before `body_whole` existed kept every body, cut or redacted as their flags say.
    bodyWhole: Boolean(row.body_whole) && !row.truncated && !row.redacted,
    ...(row.more_refused === null ? {} : { moreRefused: row.more_refused }),
    ...(row.replay_of === null ? {} : { replayOf: row.replay_of }),
    ...(row.replayed_at === null ? {} : { replayedAt: row.replayed_at }),
    ...(row.forced ? { forced: true } : {}),
  };
}

/** A whole row (`SELECT *`) as its record, receipt and body included. */
export function requestRecordOf(row: RequestRow): RequestLogRecord & { readonly seq: number } {
  const receipt = receiptOfColumn(row.receipt);
  return { ...requestEntryOf(row), body: row.body as Buffer, ...(receipt ? { receipt } : {}) };
}

/** The columns a list shows (no body); both stores. */
export const LISTED = `seq, id, received_at, path, url, mapping_id, status, code, event_ids, run_ids, duration_ms, headers,
  body_bytes, truncated, redacted, replay_of, replayed_at, forced, client_address, authenticated, body_whole, reason,
  credentials, more_refused, event_type`;

/** The columns a record is inserted with, in `requestRow`'s order; both stores. */
export const REQUEST_COLUMNS = `id, received_at, path, url, mapping_id, status, code, event_ids, run_ids, duration_ms,
  headers, body, body_bytes, truncated, redacted, replay_of, receipt, forced, client_address, authenticated, body_whole,
  reason, credentials, more_refused, event_type`;

/** A record's values for an insert; flags as 0/1, which SQLite and PostgreSQL both take. */
export function requestRow(r: RequestLogRecord): unknown[] {
  return [
    r.id,
    r.receivedAt,
    r.path,
    r.url,
    r.mappingId ?? null,
    r.status,
    r.code ?? null,
    r.eventIds.length === 0 ? null : JSON.stringify(r.eventIds),
    r.runIds.length === 0 ? null : JSON.stringify(r.runIds),
    r.durationMs,
    JSON.stringify(r.headers),
    r.body,
    r.bodyBytes,
    r.truncated ? 1 : 0,
    r.redacted ? 1 : 0,
    r.replayOf ?? null,
    receiptColumn(r.receipt),
    r.forced ? 1 : 0,
    r.client ?? null,
    r.authenticated ? 1 : 0,
    r.bodyWhole ? 1 : 0,
    r.reason ?? null,
    credentialsJson(r.credentials),
    r.moreRefused ?? null,
    r.eventType ?? null,
  ];
}

/**
 * What a row counts for in the log's byte bound (docs/operations.md#retention): its body,
 * headers and URL, and a fixed share for its other fields, its index entries and page space.
 */
export const ROW_OVERHEAD_BYTES = 512;
/** A `requests` row's bytes, in SQL (SQLite reads a blob's length without reading the blob). */
export const REQUEST_BYTES_SQL = `octet_length(body) + octet_length(headers) + octet_length(url) + ${ROW_OVERHEAD_BYTES}`;

/** A row of `requestRow`'s bytes, as `REQUEST_BYTES_SQL` counts them once stored. */
export function requestRowBytes(row: readonly unknown[]): number {
  return (
    (row[11] as Buffer).length +
    Buffer.byteLength(row[10] as string) +
    Buffer.byteLength(row[3] as string) +
    ROW_OVERHEAD_BYTES
  );
}

/** About what a record will count for once stored (what starts a retention pass; the pass counts exactly). */
export function recordBytes(r: Pick<RequestLogRecord, 'body' | 'url' | 'headers'>): number {
  let bytes = r.body.length + r.url.length + ROW_OVERHEAD_BYTES;
  for (const name in r.headers) bytes += name.length + (r.headers[name]?.length ?? 0) + 6;
  return bytes;
}

/** The credential marks as stored: null when the request carried none (built by hand: it is on every accept). */
export function credentialsJson(credentials: Readonly<Record<string, CredentialMark>>): string | null {
  let json = '';
  for (const name in credentials)
    json += `${json ? ',' : '{'}${JSON.stringify(name)}:{"verified":${credentials[name]?.verified === true}}`;
  return json ? `${json}}` : null;
}

/**
 * The WHERE clause of a list and its values; `param(n)` writes the n-th placeholder (`?` for
 * SQLite, `$n` for PostgreSQL), `dialect` says how a body is searched.
 */
export function requestListWhere(
  filter: RequestLogFilter,
  param: (n: number) => string,
  dialect: 'sqlite' | 'postgres',
): { where: string; values: unknown[] } {
  const clauses: string[] = [];
  const values: unknown[] = [];
  const at = (value: unknown) => {
    values.push(value);
    return param(values.length);
  };
  const { status } = filter;
  if (filter.path !== undefined) clauses.push(`path = ${at(filter.path)}`);
  if (filter.mapping !== undefined) clauses.push(`mapping_id = ${at(filter.mapping)}`);
  if (status && 'exact' in status) clauses.push(`status = ${at(status.exact)}`);
  if (status && 'class' in status)
    clauses.push(`status >= ${at(status.class * 100)} AND status < ${at(status.class * 100 + 100)}`);
  if (filter.failed) clauses.push('status >= 400');
  if (filter.since !== undefined) clauses.push(`received_at >= ${at(filter.since)}`);
  if (filter.until !== undefined) clauses.push(`received_at < ${at(filter.until)}`);
  if (filter.eventType !== undefined) clauses.push(`event_type = ${at(filter.eventType)}`);
  if (filter.refused !== undefined) clauses.push(filter.refused ? 'NOT authenticated' : 'authenticated');
  if (filter.search !== undefined) clauses.push(searchClause(filter.search, at, dialect));
  if (filter.beforeSeq !== undefined) clauses.push(`seq < ${at(filter.beforeSeq)}`);
  if (filter.afterSeq !== undefined) clauses.push(`seq > ${at(filter.afterSeq)}`);
  if (filter.replays === false) clauses.push('replay_of IS NULL');
  if (filter.replayed !== undefined) clauses.push(filter.replayed ? 'replayed_at IS NOT NULL' : 'replayed_at IS NULL');
  return { where: clauses.length ? ` WHERE ${clauses.join(' AND ')}` : '', values };
}

/**
 * A search: the request id, exactly, or the text in the event type or the stored body. Both
 * stores match alike: ASCII letters in any case, any other character exactly. SQLite's LIKE
 * never matches a blob, so the body is cast to text (its bytes as they are). PostgreSQL's body
 * is bytes, searched in its `escape` encoding (ASCII as it is, every other byte `\ooo`, a
 * backslash doubled), which a body cut inside a character cannot fail, with the text encoded
 * the same way.
 */
function searchClause(text: string, at: (value: unknown) => string, dialect: 'sqlite' | 'postgres'): string {
  // Placeholders in the order they appear: SQLite's `?` take their values by position.
  const id = at(text);
  const label = at(likePattern(text));
  if (dialect === 'sqlite') {
    const body = at(likePattern(text));
    return `(id = ${id} OR event_type LIKE ${label} ESCAPE '\\' OR CAST(body AS TEXT) LIKE ${body} ESCAPE '\\')`;
  }
  const body = at(likePattern(escapeEncoded(text)));
  return `(id = ${id} OR event_type ILIKE ${label} ESCAPE '\\' OR encode(body, 'escape') ILIKE ${body} ESCAPE '\\')`;
}

/** A LIKE pattern that finds `text` anywhere, its `%`, `_` and `\\` taken literally (ESCAPE '\\'). */
export const likePattern = (text: string): string => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** Text as PostgreSQL's `encode(bytes, 'escape')` writes its UTF-8 bytes. */
function escapeEncoded(text: string): string {
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    if (byte === 0x5c) out += '\\\\';
    else if (byte === 0 || byte >= 0x80) out += `\\${byte.toString(8).padStart(3, '0')}`;
    else out += String.fromCharCode(byte);
  }
  return out;
}
