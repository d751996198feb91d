import type { Logger } from '../log.js';
import type { MetaStore } from '../store/index.js';

/** The first and last UID of one batch. */
export interface UidRange {
  readonly firstUid: number;
  readonly lastUid: number;
}

/** Where the watcher is: the UIDVALIDITY and last UID delivered, and the newest date seen. */
export interface Cursor {
  uidValidity: string;
  lastUid: number;
  lastDate: number;
  /** After a UIDVALIDITY change: only mail newer than this is sent (no flood), until caught up. */
  since?: number;
  /** The batch being posted: after a crash it is posted again exactly, under the same key. */
  pending?: UidRange;
}

/** The persisted cursor of one account's mailbox; every change is saved before it resolves. */
export interface CursorStore {
  /** The cursor at connect: the stored one, a fresh one, or a re-sync after a UIDVALIDITY change. */
  load(uidValidity: string, uidNext: number): Promise<Cursor>;
  /** Records the batch about to be posted, so a crash re-posts it cut the same way. */
  markPending(cursor: Cursor, batch: UidRange): Promise<void>;
  /** Moves past a delivered batch and clears the pending one. */
  markDelivered(cursor: Cursor, lastUid: number, lastDate: number): Promise<void>;
  /** Ends the re-sync after a UIDVALIDITY change: from here on every new message counts. */
  markCaughtUp(cursor: Cursor): Promise<void>;
}

export interface CursorStoreOptions {
  /** The shared named values (on PostgreSQL, the node that takes the watcher over reads the cursor). */
  readonly meta: MetaStore;
  readonly account: string;
  readonly mailbox: string;
  readonly log: Logger;
}

/** A cursor store kept in the meta table under `mail:cursor:<account>:<mailbox>`. */
export function createCursorStore(options: CursorStoreOptions): CursorStore {
  const { meta, log } = options;
  const key = `mail:cursor:${options.account}:${options.mailbox}`;
  const save = (cursor: Cursor) => meta.set(key, cursor);
  return {
    async load(uidValidity, uidNext) {
      const stored = await meta.get<Cursor>(key);
      let cursor: Cursor;
      // A first run starts at the mailbox's end: old mail is not news.
      if (!stored) cursor = { uidValidity, lastUid: uidNext - 1, lastDate: Date.now() };
      else if (stored.uidValidity !== uidValidity) {
        log.warn(
          { was: stored.uidValidity, now: uidValidity },
          'UIDVALIDITY changed; re-syncing mail newer than the last seen',
        );
        cursor = { uidValidity, lastUid: 0, lastDate: stored.lastDate, since: stored.lastDate };
      } else cursor = stored;
      await save(cursor);
      return cursor;
    },
    async markPending(cursor, batch) {
      cursor.pending = { firstUid: batch.firstUid, lastUid: batch.lastUid };
      await save(cursor);
    },
    async markDelivered(cursor, lastUid, lastDate) {
      cursor.lastUid = lastUid;
      cursor.lastDate = lastDate;
      cursor.pending = undefined;
      await save(cursor);
    },
    async markCaughtUp(cursor) {
      cursor.since = undefined;
      await save(cursor);
    },
  };
}

/**
 * Splits UIDs into batches; a batch left pending by a crash comes first, cut exactly as
 * before (its Idempotency-Key depends on the cut).
 * @example chunksOf([1, 2, 3, 4, 5], { firstUid: 1, lastUid: 3 }, 2) // [[1, 2, 3], [4, 5]]
 */
export function chunksOf(uids: readonly number[], pending: UidRange | undefined, size: number): number[][] {
  const chunks: number[][] = [];
  let rest = uids;
  if (pending) {
    const first = rest.filter((uid) => uid <= pending.lastUid);
    if (first.length > 0) chunks.push(first);
    rest = rest.filter((uid) => uid > pending.lastUid);
  }
  for (let i = 0; i < rest.length; i += size) chunks.push(rest.slice(i, i + size));
  return chunks;
}
