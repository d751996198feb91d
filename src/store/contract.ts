import type { Accepted, Action, ActionSink, RequestLogRecord } from '../actions/index.js';
import type { AlertRepository } from './alerts.js';
import type { ConsoleSessionRecord } from './console-sessions.js';
import type { EventRepository } from './events.js';
import type { FailedRequestRepository } from './failed-requests.js';
import type { GroupCommit } from './group-commit.js';
import type { IdempotencyRepository } from './idempotency.js';
import type { MessageRepository } from './messages.js';
import type { RequestLogRepository } from './requests.js';
import type { LogRetention, LogTables } from './retention.js';
import type { RunRepository } from './runs.js';

/** A repository as a shared store offers it: every call answers with a promise. */
export type Async<T> = {
  readonly [K in keyof T]: T[K] extends (...args: infer A) => infer R ? (...args: A) => Promise<Awaited<R>> : never;
};

/**
 * What a write in a commit may do: write, never read. A shared store (PostgreSQL, docs/scale.md)
 * records these calls and sends them in the commit; the embedded store runs them in its
 * transaction.
 */
export interface Writes {
  readonly events: Pick<EventRepository, 'insert' | 'markConsumed'>;
  readonly runs: Pick<
    RunRepository,
    | 'insert'
    | 'markRunning'
    | 'finish'
    | 'markSummarized'
    | 'recordDelivery'
    | 'recordAttempt'
    | 'recordWait'
    | 'cancel'
    | 'requestCancel'
  >;
  readonly messages: Pick<MessageRepository, 'append'>;
  readonly idempotency: Pick<IdempotencyRepository, 'put'>;
  readonly requests: Pick<RequestLogRepository, 'insert' | 'markReplayed'>;
  readonly failedRequests: Pick<FailedRequestRepository, 'insert' | 'markReplayed'>;
}

/**
 * The store as the runtime uses it (docs/scale.md): reads answer with promises, writes go through
 * a commit. Every time that decides expiry or retention is the store's own clock, never a
 * node's: on PostgreSQL the database's, so that one node's wrong clock cannot expire or delete
 * what the others keep. The embedded SQLite store offers it over its synchronous repositories
 * (`sqlite/contract.ts`); a PostgreSQL store implements it over the network.
 */
export interface StoreContract {
  readonly events: Async<Pick<EventRepository, 'get' | 'pending' | 'countPending' | 'list'>>;
  readonly runs: Async<Pick<RunRepository, 'get' | 'unfinished' | 'list' | 'countByStatus' | 'attempts' | 'outcomes'>>;
  readonly messages: Async<Pick<MessageRepository, 'recent' | 'has' | 'ofRun' | 'sessions'>>;
  readonly requests: Async<Pick<RequestLogRepository, 'get' | 'list' | 'countSince'>>;
  /** The request log and the kept failures as retention passes prune them (docs/operations.md#retention). */
  readonly log: LogTables;
  readonly failedRequests: Async<Pick<FailedRequestRepository, 'forRequest'>>;
  readonly idempotency: {
    /** Deletes the records expired by the store's clock; answers how many. */
    purgeExpired(): Promise<number>;
  };
  /** Alert messages (docs/operations.md#alerts): each insert is a commit of its own. */
  readonly alerts: Async<AlertRepository>;
  /** Writes that share one commit per event-loop turn; each settles once committed. */
  readonly group: GroupCommit<Writes>;
  /** Writes in a commit of their own, made now. */
  commit<T>(write: (w: Writes) => T): Promise<T>;
}

/** Every method of `repository` named in `names`, answering with a promise. */
export function promised<T extends object, K extends keyof T>(repository: T, names: readonly K[]): Async<Pick<T, K>> {
  const out: Record<string, unknown> = {};
  for (const name of names) {
    const method = repository[name] as (...args: unknown[]) => unknown;
    out[name as string] = (...args: unknown[]) => {
      try {
        return Promise.resolve(method.apply(repository, args));
      } catch (err) {
        return Promise.reject(err);
      }
    };
  }
  return out as Async<Pick<T, K>>;
}

/** Console sign-in sessions, their expiry by the store's clock. */
export interface ConsoleSessionStore {
  /** Keeps a new session for `ttlMs`. */
  insert(session: { readonly tokenHash: string; readonly csrf: string; readonly ttlMs: number }): Promise<void>;
  /** The session while it has not expired. */
  find(tokenHash: string): Promise<ConsoleSessionRecord | undefined>;
  delete(tokenHash: string): Promise<void>;
  /** Deletes expired sessions, and the oldest beyond `keep`; answers how many. */
  prune(keep: number): Promise<number>;
}

/** Small named values (the main session's last delivery route), shared by every node. */
export interface MetaStore {
  get<T>(key: string): Promise<T | undefined>;
  set(key: string, value: unknown): Promise<void>;
}

/** What a store's action sink is told and asked (the runtime's side of an accept). */
export interface SinkOptions {
  /** Called after the actions are committed (the runtime schedules work here). */
  onCommitted?: (actions: readonly Action[], accepted: readonly Accepted[]) => void;
  /** Refuses a request before anything is written (a full queue); throws a HookdError. */
  admit?: (actions: readonly Action[]) => void;
  /** Told about a failure in `onCommitted` (the actions are stored; start-up resumes them). */
  onError?: (err: unknown) => void;
  /** Told that a request record or a kept failure could not be written; the request was answered. */
  onRecordError?: (err: unknown) => void;
  /**
   * Told what became of accepts answered 503 `COMMIT_UNCONFIRMED`, by request id, once the
   * database says (PostgreSQL: docs/scale.md#failure-behaviour).
   */
  onDoubtsResolved?: (resolved: {
    readonly committed: readonly string[];
    readonly notCommitted: readonly string[];
    readonly untold: number;
  }) => void;
  /** Told that a request record was committed (the console's live log). */
  onRecorded?: (record: RequestLogRecord) => void;
  /** How long idempotency records live. */
  idempotencyTtlSeconds?: number;
  /** Told of every row the sink adds to the log tables: it prunes them as they grow. */
  retention?: Pick<LogRetention, 'added'>;
  now?: () => number;
}

/**
 * A store as the gateway runs on it (docs/scale.md): the contract the runtime reads and writes
 * through, the shared named values, console sessions, and the action sink of hook requests.
 */
export interface StoreBackend {
  readonly data: StoreContract;
  readonly meta: MetaStore;
  readonly consoleSessions: ConsoleSessionStore;
  createSink(options: SinkOptions): ActionSink;
  /**
   * How the nodes on a shared store split the work (docs/scale.md); absent on the embedded store,
   * whose one gateway does all of it.
   */
  readonly share?: WorkShare;
  /**
   * Resolves once the store answers a trivial query, for `/metrics`' `hookd_store_up`: a read
   * that may come from a cache cannot tell (absent on the embedded store, which is a file).
   */
  ping?(): Promise<void>;
}

/** What a renewal of run leases found; an id in neither set is no longer this node's. */
export interface RenewedRuns {
  /** Held, and extended by a lease from now. */
  readonly renewed: ReadonlySet<string>;
  /** Held, but locked by another transaction at that moment: not extended this time. */
  readonly busy: ReadonlySet<string>;
  /** Held, and the operator asked to cancel them (docs/runtime.md#cancel). */
  readonly cancelled: ReadonlySet<string>;
}

/** A run this node holds a lease on. */
export interface ClaimedRun {
  readonly id: string;
  readonly sessionKey: string;
  readonly mappingId?: string;
  /** Its model, while its model call is still to be made. */
  readonly model?: string;
  /** The operator asked to cancel it: it is ended, not run. */
  readonly cancelRequested?: boolean;
}

/** What a claim leaves out. */
export interface ClaimFilter {
  /** Models whose breaker is open on this node: their runs not yet past the model call stay for later. */
  readonly skipModels?: readonly string[];
}

/**
 * Work shared by several nodes (docs/scale.md): runs claimed under leases that lapse when a node
 * stops renewing them, jobs one node runs at a time (the main session's heartbeat, the mail
 * watcher), and wake-ups between nodes.
 */
export interface WorkShare {
  /** This node's name, as leases record it. */
  readonly node: string;
  /** How long a lease lasts without renewal: a dead node's work is taken over after it. */
  readonly leaseMs: number;
  /**
   * Claims up to `limit` runs no live lease holds and no wait holds back: the oldest open run of
   * each session key, taken fairly across mappings (docs/runtime.md#fairness).
   */
  claimRuns(limit: number, filter?: ClaimFilter): Promise<ClaimedRun[]>;
  /** Takes the lease of one unsummarized run when no live lease holds it (to cancel it); false otherwise. */
  takeRun(id: string): Promise<boolean>;
  /** Renews this node's leases on `ids`, never waiting on a row another transaction holds. */
  renewRuns(ids: readonly string[]): Promise<RenewedRuns>;
  /** Frees this node's leases on unfinished runs and wakes the other nodes to take them. */
  releaseRuns(): Promise<void>;
  /** Runs waiting for a node (no live lease). */
  claimableRuns(): Promise<number>;
  /** Takes or renews a single-owner job's lease; false while another node holds it. */
  holdJob(name: string): Promise<boolean>;
  releaseJob(name: string): Promise<void>;
  /** Asks the node that owns the heartbeat for one. */
  requestHeartbeat(): Promise<void>;
  /**
   * Listens for other nodes' wake-ups until the returned function is called; the connection is
   * made again after a failure.
   */
  listen(handlers: { readonly runs: () => void; readonly heartbeat: () => void }): Promise<() => Promise<void>>;
}

/** A count that takes longer than this is answered from its last result for a while (`withinShare`). */
const SLOW_COUNT_MS = 5;

/**
 * `count`, asked again only when its last answer is older than 100 times what it took, and one
 * at a time: a scan of a table that only grows (`runs` by status, for `/metrics` and the
 * overview) then holds the event loop at most 1 % of the time, however often it is asked (8
 * scrapers at once held `/hooks/wake` 3.6-6.6 s on 3 million runs). A count under 5 ms is
 * always fresh (docs/operations.md#health-and-observability).
 */
export function withinShare<T>(count: () => Promise<T>, now: () => number = () => performance.now()): () => Promise<T> {
  let last: { readonly value: T; readonly at: number; readonly tookMs: number } | undefined;
  let running: Promise<T> | undefined;
  const ask = async () => {
    const started = now();
    try {
      const value = await count();
      const at = now();
      last = { value, at, tookMs: at - started };
      return value;
    } finally {
      running = undefined;
    }
  };
  return () => {
    if (last && last.tookMs > SLOW_COUNT_MS && now() - last.at < last.tookMs * 100) return Promise.resolve(last.value);
    running ??= ask();
    return running;
  };
}
