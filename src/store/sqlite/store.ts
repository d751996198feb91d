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
import { type BodyLog, openBodyLog } from './bodies.js';
import { createConsoleSessionRepository } from './console-sessions.js';
import { type Db, type OpenDbOptions, openDb } from './db.js';
import { createEventRepository } from './events.js';
import { createFailedRequestRepository } from './failed-requests.js';
import { createIdempotencyRepository } from './idempotency.js';
import { createLogTally, type LogTally } from './log-tables.js';
import { memoryBodyLog } from './memory-bodies.js';
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
  /** The request log's bodies (bodies.ts), beside the database file. */
  readonly bodies: BodyLog;
  /** Runs `fn` in one transaction (nested calls join the outer one). */
  transaction<T>(fn: () => T): T;
  /** Writes that share one commit per event-loop turn (see group-commit.ts). */
  readonly group: GroupCommit<Writes>;
  close(): void;
}

export interface StoreOptions extends OpenDbOptions {
  readonly onFirstWrite?: () => void;
  /** Where a segment of the request log's bodies ends (default 16 MiB; bodySegmentBytesFor in src/store/sqlite/bodies.ts). */
  readonly bodySegmentBytes?: number;
}

const BODY_SEGMENT_BYTES = 16 * 1024 * 1024;

/** Opens the embedded SQLite store at `options.path` (`:memory:` for tests). */
export function createStore(options: StoreOptions): Store {
  const db = openDb(options);
  const bodies = bodyLogOf(db, options);
  const logTally = createLogTally();
  let firstWrite = options.onFirstWrite;
  const transaction = <T>(fn: () => T): T => {
    if (firstWrite) {
      const told = firstWrite;
      firstWrite = undefined;
      told();
    }
    // What the log tables count goes back with the rows of a transaction that rolls back (a
    // group commit's writes are then tried again alone, and would be counted twice).
    const mark = logTally.mark();
    // A nested transaction joins the outer one: its bodies are written with the outer commit.
    const nested = db.inTransaction;
    try {
      if (nested) return db.transaction(fn)();
      // The commit's bodies are written before its rows commit (bodies.ts).
      return db.transaction(() => {
        const result = fn();
        bodies.flush();
        return result;
      })();
    } catch (err) {
      logTally.restore(mark);
      if (!nested) bodies.discard();
      throw err;
    }
  };
  const repositories = {
    events: createEventRepository(db),
    runs: createRunRepository(db),
    messages: createMessageRepository(db),
    meta: createMetaRepository(db),
    failedRequests: createFailedRequestRepository(db, logTally),
    idempotency: createIdempotencyRepository(db),
    requests: createRequestLogRepository(db, logTally, bodies),
    consoleSessions: createConsoleSessionRepository(db),
    alerts: createAlertRepository(db),
  };
  const group = createGroupCommit(transaction, repositories);
  return {
    ...repositories,
    db,
    bodies,
    logTally,
    transaction,
    group,
    close: () => {
      // Lingering writes (a run's progress) commit before the file closes.
      if (db.open) void group.flush();
      bodies.close();
      if (db.open) db.close();
    },
  };
}

/**
 * The body log of the database at `options.path`: its segments in `<path>-bodies/`, starting past
 * every position its records refer to (a folder lost or restored older never hands out one twice).
 */
function bodyLogOf(db: Db, options: StoreOptions): BodyLog {
  if (options.path === ':memory:') return memoryBodyLog();
  const last = db
    .prepare('SELECT body_at + body_len AS end FROM requests WHERE body_at IS NOT NULL ORDER BY seq DESC LIMIT 1')
    .get() as { end: number } | undefined;
  return openBodyLog({
    folder: `${options.path}-bodies`,
    segmentBytes: options.bodySegmentBytes ?? BODY_SEGMENT_BYTES,
    floor: last?.end ?? 0,
    sync: options.synchronous === 'full',
  });
}
