import { describe, expect, it } from 'vitest';
import { createAdminQueries } from '../../../../src/runtime/queries/index.js';
import type { RequestLogRecord, StoreContract } from '../../../../src/store/index.js';
import { createStore, sqliteContract } from '../../../../src/store/sqlite/index.js';

/** A request's run outcome in `GET /api/requests` (docs/runtime.md#request-log-and-replay). */

const run = (id: string) => ({
  id,
  sessionKey: `hook:${id}`,
  message: 'm',
  model: 'fake/m',
  wakeMode: 'now' as const,
  deliver: true,
  channel: 'chatnet' as const,
  allowUnsafeExternalContent: false,
  contentSource: 'webhook' as const,
  createdAt: 1000,
});

const record = (id: string, runIds: string[]): RequestLogRecord => ({
  id,
  receivedAt: 1000,
  path: 'x',
  url: '/hooks/x',
  status: runIds.length ? 202 : 200,
  eventIds: [],
  runIds,
  durationMs: 1,
  headers: {},
  credentials: {},
  authenticated: true,
  body: Buffer.from('{}'),
  bodyBytes: 2,
  truncated: false,
  redacted: false,
  bodyWhole: true,
});

/** The store, its every read counted (`runs.outcomes`, `requests.list`, …). */
function countedStore(): { store: StoreContract; calls: string[]; close: () => void } {
  const sqlite = createStore({ path: ':memory:', synchronous: 'normal' });
  const contract = sqliteContract(sqlite);
  const calls: string[] = [];
  const counted = <T extends object>(name: string, repository: T): T =>
    new Proxy(repository, {
      get(target, key) {
        const value = Reflect.get(target, key);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          calls.push(`${name}.${String(key)}`);
          return value.apply(target, args);
        };
      },
    });
  const store = { ...contract, runs: counted('runs', contract.runs), requests: counted('requests', contract.requests) };
  sqlite.transaction(() => {
    for (const id of ['ok1', 'ok2', 'err', 'queued', 'sent', 'failed']) sqlite.runs.insert(run(id));
    for (const id of ['ok1', 'ok2', 'sent', 'failed']) sqlite.runs.finish(id, { status: 'ok', output: 'x' }, 2000);
    sqlite.runs.finish('err', { status: 'error', error: 'boom' }, 2000);
    sqlite.runs.recordDelivery('sent', { status: 'sent', channel: 'chatnet' });
    sqlite.runs.recordDelivery('failed', { status: 'failed', channel: 'chatnet' });
    sqlite.requests.insert(record('one-ok', ['ok1']));
    sqlite.requests.insert(record('two-ok', ['ok1', 'ok2']));
    sqlite.requests.insert(record('ok-and-error', ['ok2', 'err']));
    sqlite.requests.insert(record('queued', ['queued']));
    sqlite.requests.insert(record('sent', ['sent']));
    sqlite.requests.insert(record('sent-and-failed', ['sent', 'failed']));
    sqlite.requests.insert(record('sent-and-not-yet', ['sent', 'ok1']));
    sqlite.requests.insert(record('no-runs', []));
    sqlite.requests.insert(record('pruned-runs', ['gone']));
  });
  return { store, calls, close: () => sqlite.close() };
}

describe("a page of requests and its runs' outcome", () => {
  it("sums up each request's runs: one status, or mixed; one delivery, or mixed; none without runs", async () => {
    const { store, close } = countedStore();
    const { requests } = await createAdminQueries(store).requests({ limit: 50 });
    expect(Object.fromEntries(requests.map((r) => [r.id, r.outcome]))).toEqual({
      'one-ok': { status: 'ok' },
      'two-ok': { status: 'ok' },
      'ok-and-error': { status: 'mixed' },
      queued: { status: 'queued' },
      sent: { status: 'ok', delivery: 'sent' },
      'sent-and-failed': { status: 'ok', delivery: 'mixed' },
      'sent-and-not-yet': { status: 'ok', delivery: 'mixed' },
      'no-runs': undefined,
      'pruned-runs': undefined,
    });
    close();
  });

  it('reads them with one query per page, whatever its size; none for a page without runs', async () => {
    const { store, calls, close } = countedStore();
    const queries = createAdminQueries(store);
    await queries.requests({ limit: 50 });
    expect(calls).toEqual(['requests.list', 'runs.outcomes']);
    calls.length = 0;
    const page = await queries.requests({ limit: 2 });
    expect(page.requests.map((r) => r.id)).toEqual(['pruned-runs', 'no-runs']);
    expect(calls).toEqual(['requests.list', 'runs.outcomes']);
    calls.length = 0;
    const first = await queries.requests({ limit: 1 });
    calls.length = 0;
    const next = await queries.requests({ limit: 1, beforeSeq: Number(first.nextCursor) });
    expect(next.requests.map((r) => r.id)).toEqual(['no-runs']);
    expect(calls).toEqual(['requests.list']);
    close();
  });
});
