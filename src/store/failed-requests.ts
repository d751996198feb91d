import type { FailedRequest } from '../actions/index.js';
import { receiptColumn, receiptOfColumn } from './receipts.js';

/** A hook request that was answered 5xx (docs/http.md), as stored for replay. */
export interface FailedRequestRecord extends FailedRequest {
  readonly id: string;
  readonly createdAt: number;
}

/** A row as the database answers it. */
export interface FailedRequestRow {
  id: string;
  request_id: string | null;
  sub_path: string;
  url: string;
  headers: string;
  body: Buffer;
  code: string;
  error: string;
  created_at: number;
  receipt: string | null;
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
export const FAILED_REQUEST_COLUMNS = 'id, request_id, sub_path, url, headers, body, code, error, created_at, receipt';

/** A failure's values for an insert (both stores). */
export function failedRequestRow(f: FailedRequestRecord): unknown[] {
  const { id, requestId, subPath, url, body, code, error, createdAt } = f;
  const headers = JSON.stringify(f.headers);
  return [id, requestId || null, subPath, url, headers, body, code, error, createdAt, receiptColumn(f.receipt)];
}

/** A row of `failed_requests` as a record. */
export function failedRequestOf(r: FailedRequestRow): FailedRequestRecord {
  const receipt = receiptOfColumn(r.receipt);
  return {
    ...(receipt ? { receipt } : {}),
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
