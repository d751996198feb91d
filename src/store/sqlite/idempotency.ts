import {
  IDEMPOTENCY_COLUMNS,
  type IdempotencyRecord,
  type IdempotencyRepository,
  type IdempotencyRow,
  idempotencyRow,
} from '../idempotency.js';
import type { Db } from './db.js';

/** The SQLite idempotency repository. */
export function createIdempotencyRepository(db: Db): IdempotencyRepository {
  const get = db.prepare('SELECT * FROM idempotency WHERE scope = ? AND key = ? AND expires_at > ?');
  const put = db.prepare(
    `INSERT INTO idempotency (${IDEMPOTENCY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (scope, key) DO UPDATE SET body_hash = excluded.body_hash, status = excluded.status,
       response = excluded.response, created_at = excluded.created_at, expires_at = excluded.expires_at`,
  );
  const purge = db.prepare('DELETE FROM idempotency WHERE expires_at <= ?');
  return {
    /** The live record for a key, if any. */
    get(scope: string, key: string, now: number): IdempotencyRecord | undefined {
      const row = get.get(scope, key, now) as IdempotencyRow | undefined;
      if (!row) return undefined;
      return {
        scope: row.scope,
        key: row.key,
        bodyHash: row.body_hash,
        status: row.status,
        response: row.response,
        createdAt: row.created_at,
        expiresAt: row.expires_at,
      };
    },
    put(record: IdempotencyRecord): void {
      put.run(...idempotencyRow(record));
    },
    /** Deletes expired records; returns how many. */
    purge(now: number): number {
      return purge.run(now).changes;
    },
  };
}
