import type { Db } from './db.js';

/** A hook request that was answered 5xx, kept so that it can be replayed once its cause is fixed. */
export interface FailedDelivery {
  readonly id: string;
  readonly requestId?: string;
  readonly subPath: string;
  /** Path and query string, with any `token` parameter removed. */
  readonly url: string;
  /** Request headers without credentials. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
  readonly code: string;
  readonly error: string;
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

/** Failed deliveries (DESIGN §3: a failed transform's request is kept for replay). */
export function createFailureRepository(db: Db) {
  const insert = db.prepare(
    `INSERT INTO failed_deliveries (id, request_id, sub_path, url, headers, body, code, error, created_at)
     VALUES (@id, @requestId, @subPath, @url, @headers, @body, @code, @error, @createdAt)`,
  );
  const list = db.prepare('SELECT * FROM failed_deliveries WHERE replayed_at IS NULL ORDER BY seq');
  return {
    insert(failure: FailedDelivery): void {
      insert.run({ ...failure, requestId: failure.requestId ?? null, headers: JSON.stringify(failure.headers) });
    },
    /** Failures not replayed yet, oldest first. */
    pending(): FailedDelivery[] {
      return (list.all() as Row[]).map((r) => ({
        id: r.id,
        ...(r.request_id === null ? {} : { requestId: r.request_id }),
        subPath: r.sub_path,
        url: r.url,
        headers: JSON.parse(r.headers) as Record<string, string>,
        body: r.body,
        code: r.code,
        error: r.error,
        createdAt: r.created_at,
      }));
    },
  };
}

export type FailureRepository = ReturnType<typeof createFailureRepository>;
