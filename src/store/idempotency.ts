import type { IdempotencyIntent } from '../actions/index.js';

/** A remembered 2xx answer to an idempotent request (docs/operations.md#idempotency). */
export interface IdempotencyRecord {
  readonly scope: string;
  readonly key: string;
  /** sha256 of the raw body: the same key with another body is a conflict. */
  readonly bodyHash: string;
  readonly status: number;
  /** The JSON body answered, or null for a 204. */
  readonly response: string | null;
  readonly createdAt: number;
  readonly expiresAt: number;
}

/** A row as the database answers it. */
export interface IdempotencyRow {
  scope: string;
  key: string;
  body_hash: string;
  status: number;
  response: string | null;
  created_at: number;
  expires_at: number;
}

/** Idempotency records, keyed by scope (the hook's sub-path) and key. */
export interface IdempotencyRepository {
  /** The live record for a key, if any. */
  get(scope: string, key: string, now: number): IdempotencyRecord | undefined;
  put(record: IdempotencyRecord): void;
  /** Deletes expired records; returns how many. */
  purge(now: number): number;
}

/** What an accepted request's key remembers: its answer, for `ttlMs` from `createdAt`. */
export function idempotencyRecordOf(
  intent: Pick<IdempotencyIntent, 'scope' | 'key' | 'bodyHash'>,
  answer: { readonly status: number; readonly body: unknown },
  createdAt: number,
  ttlMs: number,
): IdempotencyRecord {
  return {
    scope: intent.scope,
    key: intent.key,
    bodyHash: intent.bodyHash,
    status: answer.status,
    response: answer.body === null ? null : JSON.stringify(answer.body),
    createdAt,
    expiresAt: createdAt + ttlMs,
  };
}

/** The columns a record is inserted with, in `idempotencyRow`'s order; both stores. */
export const IDEMPOTENCY_COLUMNS = 'scope, key, body_hash, status, response, created_at, expires_at';

/** A record's values for an insert (both stores). */
export function idempotencyRow(r: IdempotencyRecord): unknown[] {
  return [r.scope, r.key, r.bodyHash, r.status, r.response, r.createdAt, r.expiresAt];
}
