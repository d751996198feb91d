import type { SessionMessage } from '../views.js';

export type { SessionMessage } from '../views.js';

/** Session transcripts: every turn's user and assistant messages, in order. */
export interface MessageRepository {
  append(sessionKey: string, messages: readonly SessionMessage[], runId: string | null, at: number): void;
  /** The last `limit` messages of a session, oldest first. */
  recent(sessionKey: string, limit: number): SessionMessage[];
  has(sessionKey: string): boolean;
  /** The messages a run added to its session (what it sent, what the model answered). */
  ofRun(sessionKey: string, runId: string): SessionMessage[];
  /** Sessions with a transcript, the most recently active first. */
  sessions(limit: number): { key: string; messages: number; lastAt: number }[];
}
