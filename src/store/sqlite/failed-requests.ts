import {
  FAILED_REQUEST_COLUMNS,
  type FailedRequestRepository,
  type FailedRequestRow,
  failedRequestOf,
  failedRequestRow,
} from '../failed-requests.js';
import type { Db } from './db.js';

/** The SQLite repository of failed requests. */
export function createFailedRequestRepository(db: Db): FailedRequestRepository {
  const insert = db.prepare(
    `INSERT INTO failed_requests (${FAILED_REQUEST_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
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
      return (list.all() as FailedRequestRow[]).map(failedRequestOf);
    },
    forRequest(requestId) {
      const row = byRequest.get(requestId) as FailedRequestRow | undefined;
      return row && failedRequestOf(row);
    },
    markReplayed(requestId, at) {
      replayed.run(at, requestId);
    },
  };
}
