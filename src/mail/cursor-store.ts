import { hookdError } from '../errors.js';
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

const isCount = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;
const isTime = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);

/**
 * Whether a stored value has a cursor's shape: a string UIDVALIDITY, whole UIDs (a NaN saved
 * as JSON comes back `null`, and `null + 1` would start the next search at UID 1: the whole
 * mailbox), finite dates, a pending range in order.
 */
export function isCursor(value: unknown): value is Cursor {
  if (typeof value !== 'object' || value === null) return false;
  const { uidValidity, lastUid, lastDate, since, pending } = value as Record<string, unknown>;
  if (typeof uidValidity !== 'string' || !isCount(lastUid) || !isTime(lastDate)) return false;
  if (since !== undefined && !isTime(since)) return false;
  if (pending === undefined) return true;
  const range = pending as Partial<UidRange> | null;
  return isCount(range?.firstUid) && isCount(range?.lastUid) && range.firstUid <= range.lastUid;
}

/**
 * The cursor at connect for a stored value: a fresh one at the mailbox's end when there is
 * none (old mail is not news), a re-sync of mail newer than the last seen after a UIDVALIDITY
 * change, or for a stored value that is not a cursor whose last date is still known.
 */
function cursorAtConnect(stored: unknown, uidValidity: string, uidNext: number, log: Logger): Cursor {
  const fresh = { uidValidity, lastUid: uidNext - 1, lastDate: Date.now() };
  if (stored === undefined || stored === null) return fresh;
  const lastDate = (stored as { lastDate?: unknown }).lastDate;
  if (!isCursor(stored)) {
    if (!isTime(lastDate)) {
      log.error({ stored }, 'the saved mail cursor is not one; starting at the end of the mailbox');
      return fresh;
    }
    log.error({ stored }, 'the saved mail cursor is not one; re-syncing mail newer than the last seen');
  } else if (stored.uidValidity !== uidValidity) {
    log.warn(
      { was: stored.uidValidity, now: uidValidity },
      'UIDVALIDITY changed; re-syncing mail newer than the last seen',
    );
  } else return stored;
  return { uidValidity, lastUid: 0, lastDate: lastDate as number, since: lastDate as number };
}

/** A cursor store kept in the meta table under `mail:cursor:<account>:<mailbox>`. */
export function createCursorStore(options: CursorStoreOptions): CursorStore {
  const { meta, log } = options;
  const key = `mail:cursor:${options.account}:${options.mailbox}`;
  const save = (cursor: Cursor) => meta.set(key, cursor);
  return {
    async load(uidValidity, uidNext) {
      if (!Number.isSafeInteger(uidNext) || uidNext < 1)
        throw hookdError('MAIL_SERVER_UNUSABLE', { problem: `UIDNEXT ${uidNext} is not a UID` });
      const cursor = cursorAtConnect(await meta.get<unknown>(key), uidValidity, uidNext, log);
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
 * The UID range a chunk of `chunksOf` is posted as: the pending batch's own when it is that
 * batch (its first or last message may have been deleted since: its key must not change).
 * @example rangeOf([2, 3], { firstUid: 1, lastUid: 3 }) // { firstUid: 1, lastUid: 3 }
 */
export function rangeOf(chunk: readonly number[], pending: UidRange | undefined): UidRange {
  const first = chunk[0] as number;
  if (pending && first <= pending.lastUid) return { firstUid: pending.firstUid, lastUid: pending.lastUid };
  return { firstUid: first, lastUid: chunk[chunk.length - 1] as number };
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
