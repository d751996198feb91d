import { type Db, type OpenDbOptions, openDb } from './db.js';
import { createEventRepository } from './events.js';
import { createFailedRequestRepository } from './failed-requests.js';
import { createGroupCommit, type GroupCommit } from './group-commit.js';
import { createIdempotencyRepository } from './idempotency.js';
import { createMessageRepository } from './messages.js';
import { createMetaRepository } from './meta.js';
import { createRunRepository } from './runs.js';

export { type Checkpointer, startCheckpointer, WRITER_AUTOCHECKPOINT_PAGES } from './checkpointer.js';
export type { EventRecord } from './events.js';
export type { SessionMessage } from './messages.js';
export type { MetaRepository } from './meta.js';
export type { DeliveryOutcome, RunRecord } from './runs.js';
/** The embedded SQLite store and its repositories. */
export interface Store {
  readonly db: Db;
  readonly events: ReturnType<typeof createEventRepository>;
  readonly runs: ReturnType<typeof createRunRepository>;
  readonly messages: ReturnType<typeof createMessageRepository>;
  readonly meta: ReturnType<typeof createMetaRepository>;
  /** Hook requests answered 5xx, kept for replay. */
  readonly failedRequests: ReturnType<typeof createFailedRequestRepository>;
  readonly idempotency: ReturnType<typeof createIdempotencyRepository>;
  /** Runs `fn` in one transaction (nested calls join the outer one). */
  transaction<T>(fn: () => T): T;
  /** Writes that share one commit per event-loop turn (see group-commit.ts). */
  readonly group: GroupCommit;
  close(): void;
}
/** Opens the store at `options.path` (`:memory:` for tests). */
export function createStore(options: OpenDbOptions): Store {
  const db = openDb(options);
  const transaction = <T>(fn: () => T): T => db.transaction(fn)();
  return {
    db,
    events: createEventRepository(db),
    runs: createRunRepository(db),
    messages: createMessageRepository(db),
    meta: createMetaRepository(db),
    failedRequests: createFailedRequestRepository(db),
    idempotency: createIdempotencyRepository(db),
    transaction,
    group: createGroupCommit(transaction),
    close: () => {
      if (db.open) db.close();
    },
  };
}
export { generateToken, readOrCreateSecret } from './secrets.js';
