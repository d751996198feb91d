import type { AlertRepository } from '../alerts.js';
import type { ConsoleSessionRepository } from '../console-sessions.js';
import type { Writes } from '../contract.js';
import type { EventRepository } from '../events.js';
import type { FailedRequestRepository } from '../failed-requests.js';
import { createGroupCommit, type GroupCommit } from '../group-commit.js';
import type { IdempotencyRepository } from '../idempotency.js';
import type { MessageRepository } from '../messages.js';
import type { RequestLogRepository } from '../requests.js';
import type { RunRepository } from '../runs.js';
import { createAlertRepository } from './alerts.js';
import { createConsoleSessionRepository } from './console-sessions.js';
import { type Db, type OpenDbOptions, openDb } from './db.js';
import { createEventRepository } from './events.js';
import { createFailedRequestRepository } from './failed-requests.js';
import { createIdempotencyRepository } from './idempotency.js';
import { createLogTally, type LogTally } from './log-tables.js';
import { createMessageRepository } from './messages.js';
import { createMetaRepository, type MetaRepository } from './meta.js';
import { createRequestLogRepository } from './requests.js';
import { createRunRepository } from './runs.js';

/** The store and its repositories: what the runtime, the sink and the mail watcher write to. */
export interface Store {
  readonly db: Db;
  readonly events: EventRepository;
  readonly runs: RunRepository;
  readonly messages: MessageRepository;
  readonly meta: MetaRepository;
  /** Hook requests answered 5xx, kept for replay. */
  readonly failedRequests: FailedRequestRepository;
  readonly idempotency: IdempotencyRepository;
  /** Authenticated hook requests (docs/runtime.md#request-log-and-replay). */
  readonly requests: RequestLogRepository;
  /** Signed-in sessions of the console (docs/console.md). */
  readonly consoleSessions: ConsoleSessionRepository;
  /** The rows and bytes of the request log and the kept failures (docs/operations.md#retention). */
  readonly logTally: LogTally;
  /** Alert messages (docs/operations.md#alerts). */
  readonly alerts: AlertRepository;
  /** Runs `fn` in one transaction (nested calls join the outer one). */
  transaction<T>(fn: () => T): T;
  /** Writes that share one commit per event-loop turn (see group-commit.ts). */
  readonly group: GroupCommit<Writes>;
  close(): void;
}

/** Opens the embedded SQLite store at `options.path` (`:memory:` for tests). */
export function createStore(options: OpenDbOptions & { readonly onFirstWrite?: () => void }): Store {
  const db = openDb(options);
  let firstWrite = options.onFirstWrite;
  const transaction = <T>(fn: () => T): T => {
    if (firstWrite) {
      const told = firstWrite;
      firstWrite = undefined;
      told();
    }
    return db.transaction(fn)();
  };
  const logTally = createLogTally();
  const repositories = {
    events: createEventRepository(db),
    runs: createRunRepository(db),
    messages: createMessageRepository(db),
    meta: createMetaRepository(db),
    failedRequests: createFailedRequestRepository(db, logTally),
    idempotency: createIdempotencyRepository(db),
    requests: createRequestLogRepository(db, logTally),
    consoleSessions: createConsoleSessionRepository(db),
    alerts: createAlertRepository(db),
  };
  return {
    ...repositories,
    db,
    logTally,
    transaction,
    group: createGroupCommit(transaction, repositories),
    close: () => {
      if (db.open) db.close();
    },
  };
}
