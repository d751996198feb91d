import { isStoreUnavailable } from './unavailable.js';
/**
 * Group commit: the writes queued within one turn of the event loop run in one transaction,
 * and each caller's promise settles only after that commit. On this class of disk a commit
 * costs about as much as inserting a 2 KB row, so hook requests and the runtime's own writes
 * share it instead of paying one each. Both stores commit through this one engine.
 *
 * A write nobody waits on as a client does (a run's progress and results) may linger: it waits
 * up to LINGER_MS for others to share its commit, unless a write that may not wait comes first
 * and takes it along (docs/operations.md#commits-and-checkpoints).
 */
export interface GroupCommit<W> {
  /**
   * Runs `write` inside the next shared transaction, with `w` (what it may write through: a
   * write in a commit never reads); resolves with its result once committed.
   */
  write<T>(write: (w: W) => T, options?: WriteOptions): Promise<T>;
  /** Commits what lingers now; resolves once every write so far is committed or failed. */
  flush(): Promise<void>;
}

export interface WriteOptions {
  /** The write may wait up to LINGER_MS for others to share its commit. */
  readonly linger?: boolean;
}

/**
 * How long a lingering write waits for company. A run's writes between two hook requests each
 * made a commit of their own, writing the same ten 16 KiB pages for one or two runs; lingering
 * 10 ms, tens of runs share them (docs/performance.md).
 */
export const LINGER_MS = 10;
/** The options of a write that may linger. */
export const LINGER: WriteOptions = { linger: true };
const noop = (): void => undefined;
/** Lingering writes that make a commit without waiting longer. */
const LINGER_MAX_ITEMS = 512;

export interface CommitQueueOptions<I, R> {
  /**
   * Writes `items` in one transaction and answers each item's result, in order; throws when the
   * transaction rolled back. Called again with one item at a time after a rollback.
   */
  readonly commit: (items: readonly I[]) => readonly R[] | Promise<readonly R[]>;
  /** Commits in flight at once (default 1: each batch waits for the one before, in order). */
  readonly concurrency?: number;
}

/** Items waiting for the next group commit. */
export interface CommitQueue<I, R> {
  /**
   * Queues `item` for the next commit (`linger`: within LINGER_MS, unless another item takes it
   * along sooner); resolves with its result once committed.
   */
  add(item: I, linger?: boolean): Promise<R>;
  /**
   * Commits what is queued without waiting out a linger (a synchronous commit starts at once);
   * resolves once every item queued so far is committed or failed.
   */
  flush(): Promise<void>;
}

interface Pending<I, R> {
  readonly item: I;
  resolve(result: R): void;
  reject(err: unknown): void;
}

/**
 * Commits a batch: each item settles with its result, or, when the batch rolled back, after a
 * commit of its own (one bad write fails alone). A store that is not there fails each write
 * alone as well, each after its own time-out (a PostgreSQL out of reach: 5 s a write, the last
 * sender of 100 waiting minutes): then the whole batch fails at once.
 */
async function flush<I, R>(options: CommitQueueOptions<I, R>, batch: readonly Pending<I, R>[]): Promise<void> {
  let results: readonly R[] | undefined;
  let failure: unknown;
  try {
    results = await options.commit(batch.map((p) => p.item));
  } catch (err) {
    failure = err;
  }
  if (results) {
    for (const [i, p] of batch.entries()) p.resolve(results[i] as R);
    return;
  }
  if (isStoreUnavailable(failure)) {
    for (const p of batch) p.reject(failure);
    return;
  }
  for (const p of batch) {
    try {
      const [result] = await options.commit([p.item]);
      p.resolve(result as R);
    } catch (err) {
      p.reject(err);
    }
  }
}

/**
 * The engine of every group commit: batches what arrives within one event-loop turn, and when a
 * batch rolls back, tries each of its items again alone, so that one bad write fails alone and
 * the others commit.
 */
export function createCommitQueue<I, R>(options: CommitQueueOptions<I, R>): CommitQueue<I, R> {
  const concurrency = options.concurrency ?? 1;
  let queue: Pending<I, R>[] = [];
  let scheduled = false;
  let inFlight = 0;
  /** An item queued may not linger: the next turn commits the queue. */
  let urgent = false;
  let lingering: NodeJS.Timeout | undefined;
  /** The item queued last: commits keep their order, so once it settles every item before it has. */
  let last: Promise<R> | undefined;

  /** Starts a commit of the queue, unless as many as may be are in flight (the last to end schedules it). */
  function start(): void {
    scheduled = false;
    if (lingering) clearTimeout(lingering);
    lingering = undefined;
    if (inFlight >= concurrency) return;
    urgent = false;
    const batch = queue;
    queue = [];
    if (batch.length === 0) return;
    inFlight++;
    void flush(options, batch).finally(() => {
      inFlight--;
      schedule();
    });
  }

  function schedule(): void {
    if (scheduled || inFlight >= concurrency || queue.length === 0) return;
    if (urgent || queue.length >= LINGER_MAX_ITEMS) {
      scheduled = true;
      setImmediate(start);
    } else if (!lingering) {
      lingering = setTimeout(start, LINGER_MS);
    }
  }

  return {
    add(item, linger = false) {
      const added = new Promise<R>((resolve, reject) => {
        queue.push({ item, resolve, reject });
        if (!linger) urgent = true;
        schedule();
      });
      last = added;
      return added;
    },
    flush() {
      const settled: Promise<void> = last ? last.then(noop, noop) : Promise.resolve();
      if (queue.length > 0) {
        urgent = true;
        start();
      }
      return settled;
    },
  };
}

/** A group commit over a synchronous `transaction` (the embedded store); each write gets `w`. */
export function createGroupCommit<W>(transaction: <T>(fn: () => T) => T, w: W): GroupCommit<W> {
  const queue = createCommitQueue<(w: W) => unknown, unknown>({
    commit: (writes) => transaction(() => writes.map((write) => write(w))),
  });
  return {
    write: <T>(write: (w: W) => T, options?: WriteOptions) => queue.add(write, options?.linger) as Promise<T>,
    flush: queue.flush,
  };
}
