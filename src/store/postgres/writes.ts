import type { Writes } from '../contract.js';
import { requestColumns, runColumns } from './rows.js';

/** One statement of a PostgreSQL commit. */
export interface PgStatement {
  readonly text: string;
  readonly values: readonly unknown[];
}

/**
 * What a commit writes, recorded as PostgreSQL statements (the same effects as the embedded
 * store's repositories): the contract runs them in the commit's transaction.
 */
export function createPgWrites(): { readonly writes: Writes; readonly statements: PgStatement[] } {
  const statements: PgStatement[] = [];
  const add = (text: string, ...values: unknown[]) => {
    statements.push({ text, values });
  };
  const writes: Writes = {
    events: {
      insert(e) {
        add(
          `INSERT INTO events (id, session_key, text, origin, allow_unsafe_external_content, content_source,
             request_id, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
          e.id,
          e.sessionKey,
          e.text,
          e.origin,
          e.allowUnsafeExternalContent,
          e.contentSource,
          e.requestId ?? null,
          e.createdAt,
        );
      },
      markConsumed(ids, at) {
        add('UPDATE events SET consumed_at = $1 WHERE id = ANY($2::text[]) AND consumed_at IS NULL', at, [...ids]);
      },
    },
    runs: {
      insert(run) {
        add(
          `INSERT INTO runs (id, session_key, name, message, model, thinking, timeout_seconds, wake_mode, deliver,
             channel, "to", allow_unsafe_external_content, content_source, status, request_id, created_at, mapping_id)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, 'queued', $14, $15, $16)`,
          ...runColumns(run, run.id, run),
        );
      },
      markRunning(id, at) {
        add("UPDATE runs SET status = 'running', started_at = $1 WHERE id = $2", at, id);
      },
      finish(id, result, at) {
        add(
          'UPDATE runs SET status = $1, output = $2, error = $3, finished_at = $4 WHERE id = $5',
          result.status,
          result.output ?? null,
          result.error ?? null,
          at,
          id,
        );
      },
      markSummarized(id, at) {
        add('UPDATE runs SET summarized_at = $1 WHERE id = $2', at, id);
      },
      recordDelivery(id, delivery) {
        add('UPDATE runs SET delivery = $1 WHERE id = $2', JSON.stringify(delivery), id);
      },
    },
    messages: {
      append(sessionKey, messages, runId, at) {
        for (const m of messages)
          add(
            'INSERT INTO messages (session_key, role, content, run_id, created_at) VALUES ($1, $2, $3, $4, $5)',
            sessionKey,
            m.role,
            m.content,
            runId,
            at,
          );
      },
    },
    idempotency: {
      put(r) {
        add(
          `INSERT INTO idempotency (scope, key, body_hash, status, response, created_at, expires_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7)
           ON CONFLICT (scope, key) DO UPDATE SET body_hash = EXCLUDED.body_hash, status = EXCLUDED.status,
             response = EXCLUDED.response, created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at`,
          r.scope,
          r.key,
          r.bodyHash,
          r.status,
          r.response,
          r.createdAt,
          r.expiresAt,
        );
      },
    },
    requests: {
      insert(r) {
        add(
          `INSERT INTO requests (id, received_at, path, url, mapping_id, status, code, event_ids, run_ids,
             duration_ms, headers, body, body_bytes, truncated, redacted, replay_of)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
          ...requestColumns(r),
        );
      },
      markReplayed(id, at) {
        add('UPDATE requests SET replayed_at = $1 WHERE seq = (SELECT MAX(seq) FROM requests WHERE id = $2)', at, id);
      },
    },
    failedRequests: {
      insert(f) {
        add(
          `INSERT INTO failed_requests (id, request_id, sub_path, url, headers, body, code, error, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
          f.id,
          f.requestId || null,
          f.subPath,
          f.url,
          JSON.stringify(f.headers),
          f.body,
          f.code,
          f.error,
          f.createdAt,
        );
      },
      markReplayed(requestId, at) {
        add('UPDATE failed_requests SET replayed_at = $1 WHERE request_id = $2', at, requestId);
      },
    },
  };
  return { writes, statements };
}
