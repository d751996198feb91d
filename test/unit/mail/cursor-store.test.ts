import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { chunksOf, createCursorStore } from '../../../src/mail/cursor-store.js';
import { createStore, type Store } from '../../../src/store/index.js';

const log = pino({ level: 'silent' });
let store: Store;
beforeEach(() => {
  store = createStore({ path: ':memory:', synchronous: 'normal' });
});
afterEach(() => store.close());

/** A cursor store over the test's meta table; a second call is the watcher after a restart. */
function cursors() {
  return createCursorStore({ meta: store.meta, account: 'me@example.com', mailbox: 'INBOX', log });
}

describe('createCursorStore', () => {
  it('starts a first run at the end of the mailbox and saves that cursor', () => {
    const cursor = cursors().load('1700', 42);
    expect(cursor).toMatchObject({ uidValidity: '1700', lastUid: 41 });
    expect(cursor.since).toBeUndefined();
    expect(store.meta.get('mail:cursor:me@example.com:INBOX')).toEqual(cursor);
  });

  it('resumes from the saved cursor, pending batch included, under the same UIDVALIDITY', () => {
    const first = cursors();
    const cursor = first.load('1700', 11);
    first.markDelivered(cursor, 12, 5000);
    first.markPending(cursor, { firstUid: 13, lastUid: 15 });
    expect(cursors().load('1700', 99)).toEqual({
      uidValidity: '1700',
      lastUid: 12,
      lastDate: 5000,
      pending: { firstUid: 13, lastUid: 15 },
    });
  });

  it('re-syncs from UID 0 after a UIDVALIDITY change, only mail newer than the last seen', () => {
    const first = cursors();
    const cursor = first.load('1700', 11);
    first.markDelivered(cursor, 30, 5000);
    first.markPending(cursor, { firstUid: 31, lastUid: 32 });
    const resynced = cursors().load('1800', 3);
    expect(resynced).toEqual({ uidValidity: '1800', lastUid: 0, lastDate: 5000, since: 5000 });
    cursors().markCaughtUp(resynced);
    expect(cursors().load('1800', 3)).toEqual({ uidValidity: '1800', lastUid: 0, lastDate: 5000 });
  });

  it('clears the pending batch once it is delivered', () => {
    const first = cursors();
    const cursor = first.load('1700', 1);
    first.markPending(cursor, { firstUid: 1, lastUid: 4 });
    first.markDelivered(cursor, 4, 7000);
    expect(cursors().load('1700', 5)).toEqual({ uidValidity: '1700', lastUid: 4, lastDate: 7000 });
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
