import { afterEach, describe, expect, it } from 'vitest';
import { createAdminQueries } from '../../../../src/runtime/queries/index.js';
import { pageOf } from '../../../../src/runtime/queries/page.js';
import { runsPage, transcriptOf } from '../../../../src/runtime/queries/queries.js';
import { requestDetail } from '../../../../src/runtime/queries/request-queries.js';
import { createStore, type Store, sqliteContract } from '../../../../src/store/sqlite/index.js';
import { hookRun } from '../../../helpers/runs.js';

/** The admin API's read models, each on its own over a real store (docs/runtime.md#admin-api). */

let store: Store | undefined;
afterEach(() => store?.close());

/** An in-memory store holding run `r1` of session `hook:r1`, queued at 1000 and finished at 3000. */
function storeWithRun(): Store {
  store = createStore({ path: ':memory:', synchronous: 'normal' });
  store.runs.insert({
    id: 'r1',
    sessionKey: 'hook:r1',
    message: 'hello',
    model: 'fake/m',
    wakeMode: 'now',
    deliver: false,
    channel: 'last',
    allowUnsafeExternalContent: false,
    contentSource: 'webhook',
    createdAt: 1000,
  });
  store.runs.markRunning('r1', 2000);
  store.runs.finish('r1', { status: 'ok', output: 'hi' }, 3000);
  return store;
}

describe('a page of a list', () => {
  it('holds `limit` rows, and the cursor of the next page only when one more row was read', () => {
    const rows = [5, 4, 3].map((seq) => ({ seq }));
    expect(pageOf(rows, 2)).toEqual({ page: [{ seq: 5 }, { seq: 4 }], nextCursor: '4' });
    expect(pageOf(rows, 3)).toEqual({ page: rows, nextCursor: null });
    expect(pageOf([], 3)).toEqual({ page: [], nextCursor: null });
  });
});

describe('one request whole', () => {
  it('shows a body that is not UTF-8 as base64, its runs and its events, and never its receipt', async () => {
    const sqlite = storeWithRun();
    sqlite.events.insert({
      id: 'e1',
      sessionKey: 'main',
      text: 'disk full',
      origin: 'system',
      allowUnsafeExternalContent: true,
      contentSource: 'webhook',
      createdAt: 1000,
    });
    sqlite.requests.insert({
      id: 'q1',
      receivedAt: 1000,
      path: 'x',
      url: '/hooks/x',
      status: 202,
      eventIds: ['e1', 'pruned'],
      runIds: ['r1'],
      durationMs: 1,
      headers: { 'content-type': 'application/octet-stream' },
      credentials: {},
      authenticated: true,
      body: Buffer.from([0x7b, 0xff, 0x7d]),
      bodyBytes: 3,
      truncated: false,
      redacted: false,
      bodyWhole: true,
      receipt: { by: 'token', via: 'bearer', credential: 'fingerprint', bodyRead: true },
    });
    const contract = sqliteContract(sqlite);
    const detail = await requestDetail(contract, 'q1', createAdminQueries(contract).runItem);
    expect(detail).toMatchObject({
      id: 'q1',
      receivedAt: '1970-01-01T00:00:01.000Z',
      headers: { 'content-type': 'application/octet-stream' },
      body: 'e/99',
      bodyEncoding: 'base64',
      events: [{ id: 'e1', text: 'disk full', consumed: false }],
      runs: [{ runId: 'r1', status: 'ok' }],
    });
    expect(detail).not.toHaveProperty('receipt');
    expect(await requestDetail(contract, 'unknown', createAdminQueries(contract).runItem)).toBeUndefined();
  });
});

describe("a run's transcript", () => {
  it('holds the messages of its own turn in its session, and when it was queued, started and ended', async () => {
    const sqlite = storeWithRun();
    sqlite.messages.append('hook:r1', [{ role: 'user', content: 'before' }], 'r0', 500);
    sqlite.messages.append(
      'hook:r1',
      [
        { role: 'user', content: 'hello' },
        { role: 'assistant', content: 'hi' },
      ],
      'r1',
      3000,
    );
    expect(await transcriptOf(sqliteContract(sqlite), 'r1')).toEqual({
      runId: 'r1',
      sessionKey: 'hook:r1',
      createdAt: '1970-01-01T00:00:01.000Z',
      startedAt: '1970-01-01T00:00:02.000Z',
      finishedAt: '1970-01-01T00:00:03.000Z',
      messages: [
        { role: 'user', content: 'hello' },
        { role: 'assistant', content: 'hi' },
      ],
    });
  });
});

describe('a filtered page of runs', () => {
  it('looks at a window of runs at a time: short of its limit, its cursor is where it stopped looking', async () => {
    store = createStore({ path: ':memory:', synchronous: 'normal' });
    const sqlite = store;
    // Run seq 1 and 2 are gh's, then 23 of stripe's: the window is 10 runs.
    sqlite.runs.insert(hookRun('gh-1', { mappingId: 'gh' }));
    sqlite.runs.insert(hookRun('gh-2', { mappingId: 'gh' }));
    for (let i = 0; i < 23; i++) sqlite.runs.insert(hookRun(`s-${i}`, { mappingId: 'stripe' }));
    sqlite.runs.finish('gh-1', { status: 'error', error: 'boom' }, 2000);
    const q = { store: sqliteContract(sqlite), now: () => 3000, waitingOf: () => undefined };
    const pages: [string[], string | null][] = [];
    let cursor: number | undefined;
    do {
      const page = await runsPage(q, { mapping: 'gh', limit: 5, ...(cursor ? { beforeSeq: cursor } : {}) }, 10);
      pages.push([page.runs.map((r) => r.runId), page.nextCursor]);
      cursor = page.nextCursor === null ? undefined : Number(page.nextCursor);
    } while (cursor !== undefined);
    expect(pages).toEqual([
      [[], '16'],
      [[], '6'],
      [['gh-2', 'gh-1'], null],
    ]);
    const failed = await runsPage(q, { status: 'failed', limit: 1 }, 100);
    expect([failed.runs.map((r) => r.runId), failed.nextCursor]).toEqual([['gh-1'], null]);
    // Not filtered: no window; a page ends where its rows do.
    const all = await runsPage(q, { limit: 30 }, 10);
    expect([all.runs.length, all.nextCursor]).toEqual([25, null]);
  });
});
