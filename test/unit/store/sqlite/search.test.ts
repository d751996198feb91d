import { describe, expect, it } from 'vitest';
import { createStore } from '../../../../src/store/sqlite/index.js';
import { searchInWindows } from '../../../../src/store/sqlite/search.js';
import { logRecord } from '../../../helpers/log-record.js';

/** A search of the request log on SQLite, read in windows (docs/runtime.md#request-log-and-replay). */

const record = (n: number) =>
  logRecord(`r${n}`, JSON.stringify({ n, word: n % 3 === 0 ? 'Needle' : 'hay' }), {
    receivedAt: n * 1000,
    bodyBytes: 20,
  });

function logOf(count: number) {
  const store = createStore({ path: ':memory:', synchronous: 'normal' });
  store.transaction(() => {
    for (let n = 1; n <= count; n++) store.requests.insert(record(n));
  });
  return store;
}

describe('a search read in windows', () => {
  it('finds what one statement over the whole log finds, page by page', async () => {
    const store = logOf(20);
    const ids = (rows: { id: string }[]) => rows.map((r) => r.id);
    for (const limit of [1, 2, 3, 10]) {
      let beforeSeq: number | undefined;
      for (let page = 0; page < 10; page++) {
        const filter = { search: 'needle', limit, ...(beforeSeq === undefined ? {} : { beforeSeq }) };
        const windowed = await searchInWindows(store.requests, filter, { maxRows: 2 });
        expect(ids(windowed)).toEqual(ids(store.requests.list(filter)));
        if (windowed.length < limit) break;
        beforeSeq = windowed.at(-1)?.seq;
      }
    }
    expect(ids(await searchInWindows(store.requests, { search: 'needle', limit: 3 }, { maxRows: 2 }))).toEqual([
      'r18',
      'r15',
      'r12',
    ]);
    expect(await searchInWindows(store.requests, { search: 'absent', limit: 3 }, { maxRows: 2 })).toEqual([]);
    store.close();
  });

  it('lets the event loop run between windows', async () => {
    const store = logOf(20);
    let ran = false;
    setImmediate(() => {
      ran = true;
    });
    await searchInWindows(store.requests, { search: 'absent', limit: 5 }, { maxRows: 4 });
    expect(ran).toBe(true);
    store.close();
  });

  it('reads nothing of an empty log, and starts at the oldest record left after pruning', async () => {
    const empty = logOf(0);
    expect(await searchInWindows(empty.requests, { search: 'needle', limit: 5 }, { maxRows: 2 })).toEqual([]);
    empty.close();
    const store = logOf(12);
    store.db.prepare('DELETE FROM requests WHERE seq <= 6').run();
    expect(store.requests.seqRange()).toEqual({ oldest: 7, newest: 12 });
    const found = await searchInWindows(store.requests, { search: 'needle', limit: 10 }, { maxRows: 5 });
    expect(found.map((r) => r.id)).toEqual(['r12', 'r9']);
    store.close();
  });

  it('sizes each window by the time the last one took: large bodies are read a few at a time, small ones thousands', async () => {
    const store = logOf(3000);
    const windowsOf = async (msPerRecord: number) => {
      const sizes: number[] = [];
      let clock = 0;
      const requests = {
        ...store.requests,
        seqRange: () => store.requests.seqRange(),
        list(filter: Parameters<typeof store.requests.list>[0]) {
          const rows = (filter.beforeSeq as number) - (filter.afterSeq as number) - 1;
          sizes.push(rows);
          clock += rows * msPerRecord;
          return store.requests.list(filter);
        },
      };
      await searchInWindows(requests, { search: 'absent', limit: 5 }, { maxRows: 5000, now: () => clock });
      return sizes;
    };
    // A record that takes 1 ms to read (64 KiB bodies, slow disk): 64 at first, then 10 a window.
    const slow = await windowsOf(1);
    expect(slow.slice(0, 3)).toEqual([64, 10, 10]);
    expect(Math.max(...slow.slice(1))).toBe(10);
    // 1 µs a record: the window doubles each time, up to the whole log's rest.
    expect((await windowsOf(0.001)).slice(0, 4)).toEqual([64, 128, 256, 512]);
    store.close();
  });
});
