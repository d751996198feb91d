import type {
  AgentAction,
  FailedRequest,
  IdempotencyIntent,
  RequestLogRecord,
  WakeAction,
} from '../../actions/index.js';

/**
 * The PostgreSQL sink's statements and the columns it binds: each insert takes one array per
 * column (`unnest`), so that a group commit is one statement per table whatever its size.
 */

export const EVENTS_INSERT = `INSERT INTO events (id, session_key, text, origin, allow_unsafe_external_content,
    content_source, request_id, created_at)
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::boolean[], $6::text[], $7::text[],
    $8::bigint[])`;

export const RUNS_INSERT = `INSERT INTO runs (id, session_key, name, message, model, thinking, timeout_seconds,
    wake_mode, deliver, channel, "to", allow_unsafe_external_content, content_source, status, request_id,
    created_at, mapping_id)
  SELECT id, session_key, name, message, model, thinking, timeout_seconds, wake_mode, deliver, channel, "to",
    allow_unsafe, content_source, 'queued', request_id, created_at, mapping_id
  FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::integer[], $8::text[],
    $9::boolean[], $10::text[], $11::text[], $12::boolean[], $13::text[], $14::text[], $15::bigint[], $16::text[])
    AS t(id, session_key, name, message, model, thinking, timeout_seconds, wake_mode, deliver, channel, "to",
      allow_unsafe, content_source, request_id, created_at, mapping_id)`;

export const REQUESTS_INSERT = `INSERT INTO requests (id, received_at, path, url, mapping_id, status, code,
    event_ids, run_ids, duration_ms, headers, body, body_bytes, truncated, redacted, replay_of)
  SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::integer[], $7::text[],
    $8::text[], $9::text[], $10::integer[], $11::text[], $12::bytea[], $13::integer[], $14::boolean[],
    $15::boolean[], $16::text[])`;

/** Inserts the keys not held; an expired key is taken over. Returns the keys taken. */
export const IDEMPOTENCY_INSERT = `INSERT INTO idempotency (scope, key, body_hash, status, response, created_at,
    expires_at)
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::integer[], $5::text[], $6::bigint[], $7::bigint[])
  ON CONFLICT (scope, key) DO UPDATE SET body_hash = EXCLUDED.body_hash, status = EXCLUDED.status,
    response = EXCLUDED.response, created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
    WHERE idempotency.expires_at <= EXCLUDED.created_at
  RETURNING scope, key`;

export const FAILED_INSERT = `INSERT INTO failed_requests (id, request_id, sub_path, url, headers, body, code,
    error, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`;

export function eventColumns(
  action: WakeAction,
  id: string,
  sessionKey: string,
  job: { readonly requestId: string; readonly createdAt: number },
): unknown[] {
  return [
    id,
    sessionKey,
    action.text,
    'hook',
    action.allowUnsafeExternalContent,
    action.contentSource,
    job.requestId,
    job.createdAt,
  ];
}

export function runColumns(
  run: Omit<AgentAction, 'kind'>,
  id: string,
  job: { readonly requestId?: string; readonly createdAt: number },
): unknown[] {
  return [
    id,
    run.sessionKey,
    run.name ?? null,
    run.message,
    run.model,
    run.thinking ?? null,
    run.timeoutSeconds ?? null,
    run.wakeMode,
    run.deliver,
    run.channel,
    run.to ?? null,
    run.allowUnsafeExternalContent,
    run.contentSource,
    job.requestId ?? null,
    job.createdAt,
    run.mappingId ?? null,
  ];
}

export function requestColumns(r: RequestLogRecord): unknown[] {
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
    r.truncated,
    r.redacted,
    r.replayOf ?? null,
  ];
}

export function idempotencyColumns(
  intent: IdempotencyIntent,
  answer: { readonly status: number; readonly body: unknown },
  createdAt: number,
  expiresAt: number,
): unknown[] {
  return [
    intent.scope,
    intent.key,
    intent.bodyHash,
    answer.status,
    answer.body === null ? null : JSON.stringify(answer.body),
    createdAt,
    expiresAt,
  ];
}

type Row = Record<string, unknown>;
const ms = (value: unknown) => Number(value);
const ids = (json: unknown): string[] => (typeof json === 'string' ? (JSON.parse(json) as string[]) : []);

/** A `requests` row as the sink's `findRequest` gives it. */
export function recordOf(row: Row): RequestLogRecord & { readonly replayedAt?: number } {
  return {
    id: row.id as string,
    receivedAt: ms(row.received_at),
    path: row.path as string,
    url: row.url as string,
    ...(row.mapping_id === null ? {} : { mappingId: row.mapping_id as string }),
    status: row.status as number,
    ...(row.code === null ? {} : { code: row.code as string }),
    eventIds: ids(row.event_ids),
    runIds: ids(row.run_ids),
    durationMs: row.duration_ms as number,
    headers: JSON.parse(row.headers as string) as Record<string, string>,
    body: row.body as Buffer,
    bodyBytes: row.body_bytes as number,
    truncated: row.truncated as boolean,
    redacted: row.redacted as boolean,
    ...(row.replay_of === null ? {} : { replayOf: row.replay_of as string }),
    ...(row.replayed_at === null ? {} : { replayedAt: ms(row.replayed_at) }),
  };
}

/** A `failed_requests` row as the sink's `findRequest` gives it. */
export function failureOf(row: Row): FailedRequest & { readonly id: string } {
  return {
    id: row.id as string,
    requestId: row.request_id as string,
    subPath: row.sub_path as string,
    url: row.url as string,
    headers: JSON.parse(row.headers as string) as Record<string, string>,
    body: row.body as Buffer,
    code: row.code as string,
    error: row.error as string,
  };
}
