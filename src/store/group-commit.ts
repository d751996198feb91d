/**
 * Group commit: the writes queued within one turn of the event loop run in one transaction,
 * and each caller's promise settles only after that commit. On this class of disk a commit
 * costs about as much as inserting a 2 KB row, so hook requests and the runtime's own writes
 * share it instead of paying one each.
 */
export interface GroupCommit<W> {
  /**
   * Runs `write` inside the next shared transaction, with `w` (what it may write through: a
   * write in a commit never reads); resolves with its result once committed.
   */
  write<T>(write: (w: W) => T): Promise<T>;
}

interface Queued<W> {
  readonly write: (w: W) => unknown;
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

/** Creates the group commit over a store's `transaction`; each write gets `w`. */
export function createGroupCommit<W>(transaction: <T>(fn: () => T) => T, w: W): GroupCommit<W> {
  let queue: Queued<W>[] = [];

  function flush(): void {
    const batch = queue;
    queue = [];
    let results: unknown[] | undefined;
    try {
      results = transaction(() => batch.map((q) => q.write(w)));
    } catch {
      results = undefined;
    }
    if (results) {
      for (const [i, q] of batch.entries()) q.resolve(results[i]);
      return;
    }
    // Something in the batch failed and the whole transaction rolled back: each write is tried
    // again on its own, so that one bad write fails alone.
    for (const q of batch) {
      try {
        q.resolve(transaction(() => q.write(w)));
      } catch (err) {
        q.reject(err);
      }
    }
  }

  return {
    write<T>(write: (w: W) => T): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        if (queue.length === 0) setImmediate(flush);
        queue.push({ write, resolve: resolve as (value: unknown) => void, reject });
      });
    },
  };
}
