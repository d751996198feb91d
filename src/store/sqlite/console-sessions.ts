import type { ConsoleSessionRepository, ConsoleSessionRow } from '../console-sessions.js';
import type { Db } from './db.js';

/** The SQLite console sessions. */
export function createConsoleSessionRepository(db: Db): ConsoleSessionRepository {
  const insert = db.prepare(
    'INSERT INTO console_sessions (token_hash, csrf, created_at, expires_at) VALUES (?, ?, ?, ?)',
  );
  const find = db.prepare('SELECT * FROM console_sessions WHERE token_hash = ? AND expires_at > ?');
  const remove = db.prepare('DELETE FROM console_sessions WHERE token_hash = ?');
  const expired = db.prepare('DELETE FROM console_sessions WHERE expires_at <= ?');
  const beyond = db.prepare(
    `DELETE FROM console_sessions WHERE token_hash IN
       (SELECT token_hash FROM console_sessions ORDER BY created_at DESC LIMIT -1 OFFSET ?)`,
  );
  return {
    insert(s) {
      insert.run(s.tokenHash, s.csrf, s.createdAt, s.expiresAt);
    },
    find(tokenHash, now) {
      const row = find.get(tokenHash, now) as ConsoleSessionRow | undefined;
      return row && { tokenHash: row.token_hash, csrf: row.csrf, createdAt: row.created_at, expiresAt: row.expires_at };
    },
    delete(tokenHash) {
      remove.run(tokenHash);
    },
    prune(now, keep) {
      return expired.run(now).changes + beyond.run(keep).changes;
    },
  };
}
