import type { SessionMessage } from '../views.js';

export type { SessionMessage } from '../views.js';

/**
 * The sessions with a message among the newest `$1` messages, the `$2` most recently active
 * first, with their message counts (each counted in the session's index) and last message's
 * time; both stores.
 */
export const SESSIONS_SQL = `WITH newest AS (SELECT session_key, seq FROM messages ORDER BY seq DESC LIMIT $1),
  active AS (SELECT session_key, MAX(seq) AS last FROM newest GROUP BY session_key ORDER BY last DESC LIMIT $2)
  SELECT a.session_key AS key, (SELECT COUNT(*) FROM messages m WHERE m.session_key = a.session_key) AS messages,
    (SELECT created_at FROM messages m WHERE m.seq = a.last) AS "lastAt"
  FROM active a ORDER BY a.last DESC`;

/** Session transcripts: every turn's user and assistant messages, in order. */
export interface MessageRepository {
  append(sessionKey: string, messages: readonly SessionMessage[], runId: string | null, at: number): void;
  /** The last `limit` messages of a session, oldest first. */
  recent(sessionKey: string, limit: number): SessionMessage[];
  has(sessionKey: string): boolean;
  /** The messages a run added to its session (what it sent, what the model answered). */
  ofRun(sessionKey: string, runId: string): SessionMessage[];
  /**
   * Sessions with a message among the newest `within` messages, the most recently active
   * first: a look at the whole table was a scan of every message ever kept.
   */
  sessions(limit: number, within: number): { key: string; messages: number; lastAt: number }[];
}
