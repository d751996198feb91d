import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { chunksOf, createCursorStore } from '../../../src/mail/cursor-store.js';
import { createStore, type Store, sqliteBackend } from '../../../src/store/sqlite/index.js';

const log = pino({ level: 'silent' });
let store: Store;
beforeEach(() => {
  store = createStore({ path: ':memory:', synchronous: 'normal' });
});
afterEach(() => store.close());

/** A cursor store over the test's meta table; a second call is the watcher after a restart. */
function cursors() {
  return createCursorStore({ meta: sqliteBackend(store).meta, account: 'me@example.com', mailbox: 'INBOX', log });
}

describe('createCursorStore', () => {
  it('starts a first run at the end of the mailbox and saves that cursor', async () => {
    const cursor = await cursors().load('1700', 42);
    expect(cursor).toMatchObject({ uidValidity: '1700', lastUid: 41 });
    expect(cursor.since).toBeUndefined();
    expect(store.meta.get('mail:cursor:me@example.com:INBOX')).toEqual(cursor);
  });

  it('resumes from the saved cursor, pending batch included, under the same UIDVALIDITY', async () => {
    const first = cursors();
    const cursor = await first.load('1700', 11);
    await first.markDelivered(cursor, 12, 5000);
    await first.markPending(cursor, { firstUid: 13, lastUid: 15 });
    expect(await cursors().load('1700', 99)).toEqual({
      uidValidity: '1700',
      lastUid: 12,
      lastDate: 5000,
      pending: { firstUid: 13, lastUid: 15 },
    });
  });

  it('re-syncs from UID 0 after a UIDVALIDITY change, only mail newer than the last seen', async () => {
    const first = cursors();
    const cursor = await first.load('1700', 11);
    await first.markDelivered(cursor, 30, 5000);
    await first.markPending(cursor, { firstUid: 31, lastUid: 32 });
    const resynced = await cursors().load('1800', 3);
    expect(resynced).toEqual({ uidValidity: '1800', lastUid: 0, lastDate: 5000, since: 5000 });
    await cursors().markCaughtUp(resynced);
    expect(await cursors().load('1800', 3)).toEqual({ uidValidity: '1800', lastUid: 0, lastDate: 5000 });
  });

  it('clears the pending batch once it is delivered', async () => {
    const first = cursors();
    const cursor = await first.load('1700', 1);
    await first.markPending(cursor, { firstUid: 1, lastUid: 4 });
    await first.markDelivered(cursor, 4, 7000);
    expect(await cursors().load('1700', 5)).toEqual({ uidValidity: '1700', lastUid: 4, lastDate: 7000 });
  });
});

describe('chunksOf', () => {
  it('cuts batches by size', () => {
    expect(chunksOf([1, 2, 3, 4, 5], undefined, 2)).toEqual([[1, 2], [3, 4], [5]]);
  });
  it('re-cuts a batch left pending by a crash exactly as before, whatever arrived since', () => {
    expect(chunksOf([1, 2, 3, 4, 5], { firstUid: 1, lastUid: 3 }, 2)).toEqual([
      [1, 2, 3],
      [4, 5],
    ]);
    expect(chunksOf([4, 5], { firstUid: 1, lastUid: 3 }, 2)).toEqual([[4, 5]]);
  });
});
