import { type ContentSource, MAIN_SESSION } from '../action-shape.js';
import type { Action } from '../actions/index.js';

/** Where a system event came from: a hook request, a run's summary, or hookd itself. */
export type EventOrigin = 'hook' | 'run-summary' | 'system';

export interface EventRecord {
  readonly id: string;
  readonly sessionKey: string;
  readonly text: string;
  readonly origin: EventOrigin;
  /** True when the event's mapping allows unsafe external content (no wrapper). */
  readonly allowUnsafeExternalContent: boolean;
  readonly contentSource: ContentSource;
  readonly createdAt: number;
  readonly consumedAt: number | null;
}

export type NewEvent = Omit<EventRecord, 'consumedAt'> & { readonly requestId?: string };

/** The event a hook request's wake action queues on the main session (both stores' sinks). */
export function hookEvent(
  action: Extract<Action, { kind: 'wake' }>,
  id: string,
  requestId: string,
  createdAt: number,
): NewEvent {
  return {
    id,
    sessionKey: MAIN_SESSION,
    text: action.text,
    origin: 'hook',
    allowUnsafeExternalContent: action.allowUnsafeExternalContent,
    contentSource: action.contentSource,
    requestId,
    createdAt,
  };
}

/** A row as the database answers it. */
export interface EventRow {
  id: string;
  session_key: string;
  text: string;
  origin: EventOrigin;
  allow_unsafe_external_content: number | boolean;
  content_source: ContentSource;
  created_at: number;
  consumed_at: number | null;
}

/** A row of `events` (SQLite's or PostgreSQL's: a flag is 0/1 or a boolean) as a record. */
export const eventOf = (row: EventRow): EventRecord => ({
  id: row.id,
  sessionKey: row.session_key,
  text: row.text,
  origin: row.origin,
  allowUnsafeExternalContent: Boolean(row.allow_unsafe_external_content),
  contentSource: row.content_source,
  createdAt: row.created_at,
  consumedAt: row.consumed_at,
});

/** System events of sessions (the main session's queue). */
export interface EventRepository {
  /** Stores an event; an id already stored is left as it is (a run summarised twice posts one summary). */
  insert(event: NewEvent): void;
  get(id: string): EventRecord | undefined;
  /** Unconsumed events, oldest first (at most `limit`). */
  pending(sessionKey: string, limit?: number): EventRecord[];
  countPending(sessionKey: string): number;
  /** The newest `limit` events of a session, oldest first. */
  list(sessionKey: string, limit: number): EventRecord[];
  /** Marks events consumed by a heartbeat turn (those already consumed stay as they are). */
  markConsumed(ids: readonly string[], at: number): void;
}

/** The columns an event is inserted with, in `eventRow`'s order (the same in both stores). */
export const EVENT_COLUMNS =
  'id, session_key, text, origin, allow_unsafe_external_content, content_source, request_id, created_at';

/** An event's values for an insert; flags as 0/1, which SQLite and PostgreSQL both take. */
export function eventRow(event: NewEvent): unknown[] {
  return [
    event.id,
    event.sessionKey,
    event.text,
    event.origin,
    event.allowUnsafeExternalContent ? 1 : 0,
    event.contentSource,
    event.requestId ?? null,
    event.createdAt,
  ];
}
