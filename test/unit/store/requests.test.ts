import { describe, expect, it } from 'vitest';
import type { RequestLogRecord } from '../../../src/store/index.js';
import { createStore } from '../../../src/store/sqlite/index.js';

const record = (n: number, extra: Partial<RequestLogRecord> = {}): RequestLogRecord => ({
  id: `r${n}`,
  receivedAt: n * 1000,
  path: n % 2 ? 'wake' : 'github',
  url: '/hooks/x',
  status: n % 3 ? 200 : 500,
  eventIds: [],
  runIds: [],
  durationMs: 1,
  headers: {},
  body: Buffer.from(`{"n":${n}}`),
  bodyBytes: 7,
  truncated: false,
  redacted: false,
  credentials: {},
  authenticated: true,
  bodyWhole: true,
  ...extra,
});

describe('the request log repository', () => {
  it('lists newest first with filters, and finds the newest record of a reused id', () => {
    const store = createStore({ path: ':memory:', synchronous: 'normal' });
    for (let n = 1; n <= 9; n++) store.requests.insert(record(n));
    store.requests.insert(record(10, { id: 'r1', status: 202 }));
    const ids = (filter: Parameters<typeof store.requests.list>[0]) => store.requests.list(filter).map((r) => r.id);
    expect(ids({ limit: 3 })).toEqual(['r1', 'r9', 'r8']);
    expect(ids({ limit: 10, failed: true })).toEqual(['r9', 'r6', 'r3']);
    expect(ids({ limit: 10, status: { class: 5 }, path: 'github' })).toEqual(['r6']);
    expect(ids({ limit: 10, status: { exact: 202 } })).toEqual(['r1']);
    expect(ids({ limit: 10, since: 8000 })).toEqual(['r1', 'r9', 'r8']);
    const [, second] = store.requests.list({ limit: 2 });
    expect(ids({ limit: 2, beforeSeq: second?.seq as number })).toEqual(['r8', 'r7']);
    expect(store.requests.get('r1')).toMatchObject({ status: 202, body: Buffer.from('{"n":10}') });
    store.close();
  });
});
