/** A signed-in console session, found by the hash of its cookie (the cookie itself is never stored). */
export interface ConsoleSessionRecord {
  readonly tokenHash: string;
  readonly csrf: string;
  readonly createdAt: number;
  readonly expiresAt: number;
}

export interface ConsoleSessionRepository {
  insert(session: ConsoleSessionRecord): void;
  /** The session while it has not expired. */
  find(tokenHash: string, now: number): ConsoleSessionRecord | undefined;
  delete(tokenHash: string): void;
  /** Deletes expired sessions, and the oldest beyond `keep`; returns how many. */
  prune(now: number, keep: number): number;
}

/** A row as the database answers it. */
export interface ConsoleSessionRow {
  token_hash: string;
  csrf: string;
  created_at: number;
  expires_at: number;
}
