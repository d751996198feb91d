import { type MessageRepository, SESSIONS_SQL, type SessionMessage } from '../messages.js';
import type { Db } from './db.js';

/** The SQLite transcript repository. */
export function createMessageRepository(db: Db): MessageRepository {
  const insert = db.prepare(
    'INSERT INTO messages (session_key, role, content, run_id, created_at) VALUES (?, ?, ?, ?, ?)',
  );
  // Newest first, put back in order here: a subquery ordered again cost a temporary B-tree per
  // run (about 35 % more per call).
  const recent = db.prepare('SELECT role, content FROM messages WHERE session_key = ? ORDER BY seq DESC LIMIT ?');
  const exists = db.prepare('SELECT 1 FROM messages WHERE session_key = ? LIMIT 1');
  const ofRun = db.prepare('SELECT role, content FROM messages WHERE session_key = ? AND run_id = ? ORDER BY seq');
  const sessions = db.prepare(SESSIONS_SQL.replace('$1', '@within').replace('$2', '@limit'));

  return {
    append(sessionKey: string, messages: readonly SessionMessage[], runId: string | null, at: number): void {
      for (const m of messages) insert.run(sessionKey, m.role, m.content, runId, at);
    },
    /** The last `limit` messages of a session, oldest first. */
    recent(sessionKey: string, limit: number): SessionMessage[] {
      return (recent.all(sessionKey, limit) as SessionMessage[]).reverse();
    },
    ofRun(sessionKey, runId) {
      return ofRun.all(sessionKey, runId) as SessionMessage[];
    },
    sessions(limit, within) {
      return sessions.all({ limit, within }) as { key: string; messages: number; lastAt: number }[];
    },
    has(sessionKey: string): boolean {
      return exists.get(sessionKey) !== undefined;
    },
  };
}
