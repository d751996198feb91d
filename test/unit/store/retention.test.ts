import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { FailedRequest, RequestLogRecord } from '../../../src/actions/index.js';
import type { StoreContract } from '../../../src/store/index.js';
import { createLogRetention, type RetentionOutcome, type RetentionPolicy } from '../../../src/store/index.js';
import { createStore, createStoreSink, type Store, sqliteContract } from '../../../src/store/sqlite/index.js';
import { createLogTally, createSqliteLogTables } from '../../../src/store/sqlite/log-tables.js';
import { makeTempDir } from '../../helpers/hookd-process.js';

/** One retention policy for the request log and the kept failures (docs/operations.md#retention). */

let store: Store | undefined;
let temp: ReturnType<typeof makeTempDir> | undefined;
afterEach(() => {
  store?.close();
  store = undefined;
  temp?.cleanup();
  temp = undefined;
});

const DAY_MS = 86_400_000;
const record = (n: number, bodyBytes = 100, receivedAt = Date.now()): RequestLogRecord => ({
  id: `r${n}`,
  receivedAt,
  path: 'note',
  url: '/hooks/note',
  status: 200,
  eventIds: [],
  runIds: [],
  durationMs: 1,
  headers: { 'content-type': 'application/json' },
  credentials: {},
  authenticated: true,
  body: Buffer.alloc(bodyBytes, 120),
  bodyBytes,
  truncated: false,
  redacted: false,
  bodyWhole: true,
});
const failure = (n: number, bodyBytes = 100): FailedRequest => ({
  requestId: `f${n}`,
  subPath: 'note',
  url: '/hooks/note',
  headers: {},
  credentials: {},
  body: Buffer.alloc(bodyBytes, 120),
  redacted: false,
  code: 'TRANSFORM_FAILED',
  error: 'boom',
});

interface World {
  store: Store;
  contract: StoreContract;
  sink: ReturnType<typeof createStoreSink>;
  retention: ReturnType<typeof createLogRetention>;
  passes: RetentionOutcome[];
  /** Sizes counted from the rows themselves (a new tally), to hold the running one against. */
  recount(): ReturnType<StoreContract['log']['size']>;
}

function world(
  policy: Partial<RetentionPolicy>,
  path = ':memory:',
  now = Date.now,
  bodySegmentBytes: number | undefined = undefined,
): World {
  store = createStore({ path, synchronous: 'normal', ...(bodySegmentBytes ? { bodySegmentBytes } : {}) });
  const s = store;
  const contract = sqliteContract(s, now);
  const passes: RetentionOutcome[] = [];
  const full = { maxAgeMs: 7 * DAY_MS, maxRows: 100_000, maxBytes: 1 << 30, refusedShare: 0.125, ...policy };
  const retention = createLogRetention(contract.log, full, { onPass: (o) => passes.push(o) });
  const sink = createStoreSink(s, { retention, now });
  const recount = () => createSqliteLogTables(s.db, createLogTally(), s.group, now, s.bodies).size();
  return { store: s, contract, sink, retention, passes, recount };
}

/** Lets a commit and the retention pass it started finish. */
async function settled(w: World): Promise<void> {
  await w.store.group.write(() => undefined);
  await w.retention.idle();
}

const count = (w: World, table: string) =>
  (w.store.db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;

describe('the retention of the request log and the kept failures', () => {
  it('keeps each table within maxRows as rows are added, no timer needed, cutting the oldest', async () => {
    const w = world({ maxRows: 40 });
    for (let n = 1; n <= 200; n++) {
      w.sink.recordRequest(record(n));
      if (n % 3 === 0) w.sink.recordFailure(failure(n));
      await settled(w);
      expect(count(w, 'requests')).toBeLessThanOrEqual(40);
      expect(count(w, 'failed_requests')).toBeLessThanOrEqual(40);
    }
    expect(w.passes.length).toBeGreaterThan(10);
    // A pass leaves 7/8 of the bound: the next is an eighth away.
    expect(count(w, 'requests')).toBeGreaterThanOrEqual(35);
    const ids = w.store.requests.list({ limit: 100 }).map((r) => r.id);
    expect(ids[0]).toBe('r200');
    expect(ids.at(-1)).toBe(`r${201 - ids.length}`);
  });

  it('keeps both tables together within maxBytes, the oldest rows of either going first', async () => {
    const w = world({ maxBytes: 256 * 1024 });
    for (let n = 1; n <= 120; n++) {
      w.sink.recordRequest(record(n, 4000));
      if (n % 4 === 0) w.sink.recordFailure(failure(n, 16_000));
      await settled(w);
      const { requests, failures } = await w.recount();
      expect(requests.bytes + failures.bytes).toBeLessThanOrEqual(256 * 1024);
    }
    const { requests, failures } = await w.recount();
    // Both kinds are left, the newest of each: neither table was emptied for the other.
    expect(requests.rows).toBeGreaterThan(10);
    expect(failures.rows).toBeGreaterThan(2);
    expect(w.store.failedRequests.forRequest('f120')).toBeDefined();
    expect(w.store.failedRequests.forRequest('f4')).toBeUndefined();
    // The running tally is what a fresh count finds.
    expect(await w.contract.log.size()).toEqual(await w.recount());
  });

  it('keeps refused records within their share, never pushing out an authenticated record', async () => {
    const w = world({ maxBytes: 256 * 1024, maxRows: 400, refusedShare: 0.125 });
    for (let n = 1; n <= 40; n++) w.sink.recordRequest(record(n, 4000));
    await settled(w);
    const refused = (n: number): RequestLogRecord => ({
      ...record(100_000 + n, 0),
      status: 401,
      authenticated: false,
      bodyWhole: false,
      headers: { authorization: '[masked]', 'x-padding': '' },
    });
    for (let batch = 0; batch < 40; batch++) {
      w.sink.recordRefused(Array.from({ length: 25 }, (_, i) => refused(batch * 25 + i)));
      await settled(w);
      const size = await w.recount();
      expect(size.refused.bytes).toBeLessThanOrEqual(32 * 1024);
      expect(size.refused.rows).toBeLessThanOrEqual(50);
      expect(size.requests.rows).toBe(40);
    }
    // The newest refusals are the ones kept; every authenticated record is.
    const listed = w.store.requests.list({ limit: 500 });
    expect(listed.filter((r) => r.authenticated)).toHaveLength(40);
    expect(listed[0]?.id).toBe('r100999');
    expect(await w.contract.log.size()).toEqual(await w.recount());
  });

  it('deletes what is older than the age by the store clock, and expired idempotency keys, in one pass', async () => {
    let now = 10 * DAY_MS;
    const w = world({ maxAgeMs: DAY_MS }, ':memory:', () => now);
    w.store.transaction(() => {
      for (let n = 1; n <= 1500; n++) w.store.requests.insert(record(n, 10, n <= 1200 ? 8 * DAY_MS : now));
      w.store.idempotency.put({
        scope: 'agent',
        key: 'k',
        bodyHash: 'h',
        status: 202,
        response: null,
        createdAt: 0,
        expiresAt: now - 1,
      });
    });
    w.sink.recordFailure(failure(1));
    now += 2 * DAY_MS;
    w.sink.recordFailure(failure(2));
    const outcome = await w.retention.enforce();
    expect(outcome).toMatchObject({ requests: 1500, failures: 1, idempotency: 1 });
    expect(w.store.failedRequests.forRequest('f2')).toBeDefined();
  });

  it("gives the freed space back to the file system: the database's pages and the body log's segments", async () => {
    temp = makeTempDir();
    const path = join(temp.dir, 'hookd.db');
    const maxBytes = 512 * 1024;
    const w = world({ maxBytes }, path, Date.now, 64 * 1024);
    const pageBytes = w.store.db.pragma('page_size', { simple: true }) as number;
    const pages = () => w.store.db.pragma('page_count', { simple: true }) as number;
    const onDisk = () => pages() * pageBytes + w.store.bodies.bytes();
    // 4 MB of bodies in 40 commits (a commit's bodies are one write to one segment).
    for (let c = 0; c < 40; c++) {
      w.store.transaction(() => {
        for (let n = 1; n <= 10; n++) w.store.requests.insert(record(c * 10 + n, 10_000));
      });
    }
    const before = onDisk();
    expect(w.store.bodies.bytes()).toBe(4_000_000);
    const outcome = await w.retention.enforce();
    expect(outcome.vacuumedPages).toBeGreaterThan(0);
    expect(onDisk()).toBeLessThan(before / 4);
    expect(w.store.bodies.bytes()).toBeLessThanOrEqual(maxBytes);
    expect(readdirSync(`${path}-bodies`).length).toBeLessThanOrEqual(8);
    expect(w.store.db.pragma('freelist_count', { simple: true })).toBeLessThanOrEqual(maxBytes / 8 / pageBytes + 1);
  });
});

describe('the running tally of the log tables', () => {
  const boom = () => {
    throw new Error('a write that fails');
  };

  it('counts only what commits when a group commit rolls back and its writes are tried again alone', async () => {
    const w = world({});
    w.sink.recordRequest(record(1));
    await settled(w);
    await w.contract.log.size();
    // One turn: two records and a write that fails share a commit, which rolls back; each is then
    // tried alone (group-commit.ts), the records commit, the failing write fails alone.
    w.sink.recordRequest(record(2));
    const failed = w.store.group.write(boom);
    w.sink.recordRequest(record(3));
    await expect(failed).rejects.toThrow('a write that fails');
    await settled(w);
    expect(count(w, 'requests')).toBe(3);
    expect(await w.contract.log.size()).toEqual(await w.recount());
  });

  it('takes back only the rows a committed prune deleted when its commit rolled back first', async () => {
    const w = world({});
    for (let n = 1; n <= 10; n++) w.sink.recordRequest(record(n, 100 * n));
    await settled(w);
    await w.contract.log.size();
    const pruned = w.contract.log.pruneOldest('requests', 4);
    const failed = w.store.group.write(boom);
    await expect(failed).rejects.toThrow('a write that fails');
    expect((await pruned).rows).toBe(4);
    expect(count(w, 'requests')).toBe(6);
    expect(await w.contract.log.size()).toEqual(await w.recount());
  });

  it('counts no refused record of a batch that rolled back', async () => {
    const w = world({});
    w.sink.recordRequest(record(1));
    await settled(w);
    await w.contract.log.size();
    const refused = { ...record(2, 0), status: 401, authenticated: false, bodyWhole: false };
    // The second breaks a NOT NULL column: the batch's transaction rolls back, the first with it.
    w.sink.recordRefused([refused, { ...refused, id: 'r3', path: null as unknown as string }]);
    expect(count(w, 'requests')).toBe(1);
    expect(await w.contract.log.size()).toEqual(await w.recount());
  });
});
