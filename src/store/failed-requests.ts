import type { FailedRequest } from '../actions/index.js';
import type { Db } from './db.js';

/** A hook request that was answered 5xx (docs/http.md), as stored for replay. */
export interface FailedRequestRecord extends FailedRequest {
  readonly id: string;
  readonly createdAt: number;
}

interface Row {
  id: string;
  request_id: string | null;
  sub_path: string;
  url: string;
  headers: string;
  body: Buffer;
  code: string;
  error: string;
  created_at: number;
}

/** Hook requests that failed on our side (a failed transform), kept for replay (docs/http.md). */
export interface FailedRequestRepository {
  insert(failure: FailedRequestRecord): void;
  /** Failed requests not replayed yet, oldest first. */
  pending(): FailedRequestRecord[];
  /** The newest failure kept for a request id (its whole body, for a replay). */
  forRequest(requestId: string): FailedRequestRecord | undefined;
  /** Marks the failures kept for a request id replayed. */
  markReplayed(requestId: string, at: number): void;
}

/** The columns a failure is kept with, in `failedRequestRow`'s order; both stores. */
export const FAILED_REQUEST_COLUMNS = 'id, request_id, sub_path, url, headers, body, code, error, created_at';

/** A failure's values for an insert (both stores). */
export function failedRequestRow(f: FailedRequestRecord): unknown[] {
  return [f.id, f.requestId || null, f.subPath, f.url, JSON.stringify(f.headers), f.body, f.code, f.error, f.createdAt];
}

/** The SQLite repository of failed requests. */
export function createFailedRequestRepository(db: Db): FailedRequestRepository {
  const insert = db.prepare(
    `INSERT INTO failed_requests (${FAILED_REQUEST_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const list = db.prepare('SELECT * FROM failed_requests WHERE replayed_at IS NULL ORDER BY seq');
  const byRequest = db.prepare('SELECT * FROM failed_requests WHERE request_id = ? ORDER BY seq DESC LIMIT 1');
  const replayed = db.prepare(
    'UPDATE failed_requests SET replayed_at = ? WHERE request_id = ? AND replayed_at IS NULL',
  );
  return {
    insert(failure) {
      insert.run(...failedRequestRow(failure));
    },
    pending() {
      return (list.all() as Row[]).map(failedRequestOf);
    },
    forRequest(requestId) {
      const row = byRequest.get(requestId) as Row | undefined;
      return row && failedRequestOf(row);
    },
    markReplayed(requestId, at) {
      replayed.run(at, requestId);
    },
  };
}

/** A row of `failed_requests` as a record. */
export function failedRequestOf(r: Row): FailedRequestRecord {
  return {
    id: r.id,
    requestId: r.request_id ?? '',
    subPath: r.sub_path,
    url: r.url,
    headers: JSON.parse(r.headers) as Record<string, string>,
    body: r.body,
    code: r.code,
    error: r.error,
    createdAt: r.created_at,
  };
}
