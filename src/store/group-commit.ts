/**
 * Group commit: the writes queued within one turn of the event loop run in one transaction,
 * and each caller's promise settles only after that commit. On this class of disk a commit
 * costs about as much as inserting a 2 KB row, so hook requests and the runtime's own writes
 * share it instead of paying one each. Both stores commit through this one engine.
 */
export interface GroupCommit<W> {
  /**
   * Runs `write` inside the next shared transaction, with `w` (what it may write through: a
   * write in a commit never reads); resolves with its result once committed.
   */
  write<T>(write: (w: W) => T): Promise<T>;
}

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
  /** Queues `item` for the next commit; resolves with its result once committed. */
  add(item: I): Promise<R>;
}

interface Pending<I, R> {
  readonly item: I;
  resolve(result: R): void;
  reject(err: unknown): void;
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

  function schedule(): void {
    if (scheduled || inFlight >= concurrency || queue.length === 0) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      const batch = queue;
      queue = [];
      if (batch.length === 0) return;
      inFlight++;
      void flush(batch).finally(() => {
        inFlight--;
        schedule();
      });
    });
  }

  async function flush(batch: readonly Pending<I, R>[]): Promise<void> {
    let results: readonly R[] | undefined;
    try {
      results = await options.commit(batch.map((p) => p.item));
    } catch {
      results = undefined;
    }
    if (results) {
      for (const [i, p] of batch.entries()) p.resolve(results[i] as R);
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

  return {
    add(item) {
      return new Promise<R>((resolve, reject) => {
        queue.push({ item, resolve, reject });
        schedule();
      });
    },
  };
}

/** A group commit over a synchronous `transaction` (the embedded store); each write gets `w`. */
export function createGroupCommit<W>(transaction: <T>(fn: () => T) => T, w: W): GroupCommit<W> {
  const queue = createCommitQueue<(w: W) => unknown, unknown>({
    commit: (writes) => transaction(() => writes.map((write) => write(w))),
  });
  return { write: <T>(write: (w: W) => T) => queue.add(write) as Promise<T> };
}
