import type pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { StoreContract } from '../../src/store/index.js';
import { createPgContract, createPgPool } from '../../src/store/postgres/contract.js';
import { migratePostgres } from '../../src/store/postgres/migrate.js';
import { createStore, sqliteContract } from '../../src/store/sqlite/index.js';
import { type PgCluster, postgresTestsRun, startPgCluster } from '../helpers/postgres.js';

/**
 * The store contract the runtime uses (docs/scale.md): one suite, run against the embedded SQLite
 * store and against PostgreSQL.
 */

let cluster: PgCluster | undefined;
let pool: pg.Pool | undefined;

beforeAll(async () => {
  if (!postgresTestsRun) return;
  cluster = await startPgCluster();
  pool = createPgPool(cluster.url, { max: 8 });
  await migratePostgres(pool);
}, 30_000);

afterAll(async () => {
  await pool?.end();
  await cluster?.stop();
});

const sqlite = (): StoreContract => sqliteContract(createStore({ path: ':memory:', synchronous: 'normal' }));
const postgres = (): StoreContract => {
  if (!pool) throw new Error('no cluster');
  return createPgContract(pool);
};

const event = (id: string, sessionKey = 'main', text = `event ${id}`) => ({
  id,
  sessionKey,
  text,
  origin: 'hook' as const,
  allowUnsafeExternalContent: false,
  contentSource: 'webhook' as const,
  createdAt: 1000,
});

const run = (id: string, extra: object = {}) => ({
  id,
  sessionKey: `hook:${id}`,
  message: `do ${id}`,
  model: 'fake/m',
  wakeMode: 'now' as const,
  deliver: true,
  channel: 'chatnet' as const,
  to: '42',
  allowUnsafeExternalContent: false,
  contentSource: 'webhook' as const,
  createdAt: 2000,
  mappingId: 'm',
  ...extra,
});

const record = (id: string, extra: object = {}) => ({
  id,
  receivedAt: 5000,
  path: 'note',
  url: '/hooks/note',
  status: 200,
  eventIds: ['e1'],
  runIds: [],
  durationMs: 2,
  headers: { 'content-type': 'application/json' },
  body: Buffer.from('{"n":1}'),
  bodyBytes: 7,
  truncated: false,
  redacted: false,
  credentials: {},
  authenticated: true,
  bodyWhole: true,
  ...extra,
});

function contract(name: string, make: () => StoreContract, runs: boolean) {
  describe.skipIf(!runs)(`the store contract on ${name}`, () => {
    beforeEach(async () => {
      if (name === 'PostgreSQL')
        await pool?.query(
          'TRUNCATE events, runs, run_attempts, messages, requests, failed_requests, idempotency, alerts RESTART IDENTITY',
        );
    });

    it('queues events per session and consumes them in a commit', async () => {
      const store = make();
      await store.commit((w) => {
        w.events.insert(event('e1'));
        w.events.insert(event('e2'));
        w.events.insert(event('x1', 'other'));
      });
      expect((await store.events.pending('main')).map((e) => e.id)).toEqual(['e1', 'e2']);
      expect(await store.events.countPending('main')).toBe(2);
      expect(await store.events.get('e2')).toEqual({ ...event('e2'), consumedAt: null });
      await store.group.write((w) => w.events.markConsumed(['e1', 'nope'], 3000));
      expect((await store.events.pending('main', 10)).map((e) => e.id)).toEqual(['e2']);
      expect((await store.events.list('main', 100)).map((e) => [e.id, e.consumedAt])).toEqual([
        ['e1', 3000],
        ['e2', null],
      ]);
      expect(await store.events.get('missing')).toBeUndefined();
      // The newest of a session, oldest first: a list never grows with the gateway's age.
      expect((await store.events.list('main', 1)).map((e) => e.id)).toEqual(['e2']);
      expect((await store.events.list('other', 5)).map((e) => e.id)).toEqual(['x1']);
    });

    it('takes a run from queued to summarized', async () => {
      const store = make();
      await store.group.write((w) => w.runs.insert(run('r1')));
      expect(await store.runs.get('r1')).toMatchObject({ ...run('r1'), status: 'queued' });
      // What starting it needs, not its message: a backlog is read whole at start.
      expect(await store.runs.unfinished()).toEqual([
        { id: 'r1', sessionKey: 'hook:r1', mappingId: run('r1').mappingId, model: 'fake/m', status: 'queued' },
      ]);
      await store.group.write((w) => w.runs.markRunning('r1', 2100));
      await store.group.write((w) => {
        w.runs.finish('r1', { status: 'ok', output: 'done' }, 2200);
        w.messages.append(
          'hook:r1',
          [
            { role: 'user', content: 'do r1' },
            { role: 'assistant', content: 'done' },
          ],
          'r1',
          2200,
        );
        w.runs.recordDelivery('r1', { status: 'failed', channel: 'chatnet', to: '42', reason: 'HTTP 500' });
      });
      const finished = await store.runs.get('r1');
      expect(finished).toMatchObject({ status: 'ok', output: 'done', startedAt: 2100, finishedAt: 2200 });
      expect(finished?.delivery).toEqual({ status: 'failed', channel: 'chatnet', to: '42', reason: 'HTTP 500' });
      expect((await store.runs.list({ status: 'failed', limit: 10 })).map((r) => r.id)).toEqual(['r1']);
      expect(await store.runs.list({ status: 'queued', limit: 10 })).toEqual([]);
      expect(await store.runs.countByStatus()).toEqual({ ok: 1 });
      await store.group.write((w) => w.runs.markSummarized('r1', 2300));
      expect(await store.runs.unfinished()).toEqual([]);
      expect(await store.messages.ofRun('hook:r1', 'r1')).toEqual([
        { role: 'user', content: 'do r1' },
        { role: 'assistant', content: 'done' },
      ]);
    });

    it("keeps a run's failed attempts in order, per run", async () => {
      const store = make();
      await store.commit((w) => {
        w.runs.insert(run('a1'));
        w.runs.insert(run('a2'));
      });
      const attempt = { kind: 'model' as const, outcome: 'MODEL_REFUSED', status: 500, error: 'HTTP 500 body' };
      await store.group.write((w) => w.runs.recordAttempt({ runId: 'a1', at: 10, n: 1, ...attempt }));
      await store.group.write((w) => {
        w.runs.recordAttempt({
          runId: 'a2',
          at: 11,
          kind: 'delivery',
          n: 1,
          outcome: 'CHANNEL_UNREACHABLE',
          error: 'down',
        });
        w.runs.recordAttempt({ runId: 'a1', at: 12, n: 2, ...attempt });
      });
      expect(await store.runs.attempts(['a1'])).toEqual([
        { runId: 'a1', at: 10, n: 1, ...attempt },
        { runId: 'a1', at: 12, n: 2, ...attempt },
      ]);
      expect((await store.runs.attempts(['a2', 'a1'])).map((a) => [a.runId, a.n])).toEqual([
        ['a1', 1],
        ['a2', 1],
        ['a1', 2],
      ]);
      expect(await store.runs.attempts(['a2'])).toEqual([
        { runId: 'a2', at: 11, kind: 'delivery', n: 1, outcome: 'CHANNEL_UNREACHABLE', error: 'down' },
      ]);
      expect(await store.runs.attempts([])).toEqual([]);
    });

    it("lists a mapping's runs, with a status and by cursor", async () => {
      const store = make();
      await store.commit((w) => {
        w.runs.insert(run('m1', { mappingId: 'gh' }));
        w.runs.insert(run('m2', { mappingId: 'stripe' }));
        w.runs.insert(run('m3', { mappingId: 'gh' }));
        w.runs.insert(run('m4', { mappingId: 'gh' }));
        w.runs.finish('m3', { status: 'error', error: 'boom' }, 10);
      });
      const ids = async (filter: object) => (await store.runs.list({ limit: 10, ...filter })).map((r) => r.id);
      expect(await ids({ mapping: 'gh' })).toEqual(['m4', 'm3', 'm1']);
      expect(await ids({ mapping: 'gh', status: 'failed' })).toEqual(['m3']);
      expect(await ids({ mapping: 'gh', status: 'queued' })).toEqual(['m4', 'm1']);
      expect(await ids({ mapping: 'GH' })).toEqual([]);
      const [, second] = await store.runs.list({ limit: 2, mapping: 'gh' });
      expect(await ids({ mapping: 'gh', beforeSeq: second?.seq })).toEqual(['m1']);
      // A window of runs: only those after `afterSeq` (a filtered page of the admin API).
      const [, m3, , m1] = await store.runs.list({ limit: 10 });
      expect(await ids({ mapping: 'gh', afterSeq: m1?.seq })).toEqual(['m4', 'm3']);
      expect(await ids({ afterSeq: m1?.seq, beforeSeq: m3?.seq })).toEqual(['m2']);
    });

    it("reads the status and delivery status of many runs in one query (a request list's outcomes)", async () => {
      const store = make();
      await store.commit((w) => {
        for (const id of ['o1', 'o2', 'o3']) w.runs.insert(run(id));
        w.runs.finish('o1', { status: 'ok', output: 'x' }, 10);
        w.runs.recordDelivery('o1', { status: 'sent', channel: 'chatnet' });
        w.runs.finish('o2', { status: 'timeout', error: 'slow' }, 10);
      });
      const found = await store.runs.outcomes(['o3', 'o1', 'o2', 'nope']);
      expect(found.sort((a, b) => a.id.localeCompare(b.id))).toEqual([
        { id: 'o1', status: 'ok', delivery: 'sent' },
        { id: 'o2', status: 'timeout' },
        { id: 'o3', status: 'queued' },
      ]);
      expect(await store.runs.outcomes([])).toEqual([]);
    });

    it('keeps transcripts: the recent ones in order, whether a session has any, the sessions by activity', async () => {
      const store = make();
      await store.commit((w) => {
        w.messages.append(
          's1',
          [
            { role: 'user', content: 'a' },
            { role: 'assistant', content: 'b' },
          ],
          null,
          10,
        );
        w.messages.append('s2', [{ role: 'user', content: 'x' }], null, 20);
        w.messages.append('s1', [{ role: 'user', content: 'c' }], null, 30);
      });
      expect((await store.messages.recent('s1', 2)).map((m) => m.content)).toEqual(['b', 'c']);
      expect((await store.messages.recent('s1', 100)).map((m) => m.content)).toEqual(['a', 'b', 'c']);
      expect(await store.messages.has('s2')).toBe(true);
      expect(await store.messages.has('s3')).toBe(false);
      expect(await store.messages.sessions(10, 100)).toEqual([
        { key: 's1', messages: 3, lastAt: 30 },
        { key: 's2', messages: 1, lastAt: 20 },
      ]);
      // Only sessions with one of the newest messages, each with all its messages counted.
      expect(await store.messages.sessions(10, 1)).toEqual([{ key: 's1', messages: 3, lastAt: 30 }]);
      expect(await store.messages.sessions(1, 2)).toEqual([{ key: 's1', messages: 3, lastAt: 30 }]);
      await store.commit((w) => w.messages.append('s3', [{ role: 'user', content: 'y' }], null, 40));
      expect((await store.messages.sessions(10, 2)).map((s) => s.key)).toEqual(['s3', 's1']);
    });

    it('logs requests: filters, the newest by id, counts, replayed marks and pruning', async () => {
      const store = make();
      await store.group.write((w) => {
        w.requests.insert(record('a'));
        w.requests.insert(record('b', { status: 500, code: 'TRANSFORM_FAILED', eventIds: [], receivedAt: 6000 }));
        w.requests.insert(
          record('c', {
            path: 'wake',
            status: 202,
            runIds: ['r9'],
            replayOf: 'b',
            receivedAt: 7000,
            eventType: 'push',
            mappingId: 'gh',
          }),
        );
        w.requests.insert(record('a', { status: 400, code: 'TEXT_REQUIRED', receivedAt: 8000 }));
      });
      const ids = async (filter: object) =>
        (await store.requests.list({ limit: 10, ...filter })).map((r) => `${r.id}:${r.status}`);
      expect(await ids({})).toEqual(['a:400', 'c:202', 'b:500', 'a:200']);
      expect(await ids({ path: 'note' })).toEqual(['a:400', 'b:500', 'a:200']);
      expect(await ids({ mapping: 'gh' })).toEqual(['c:202']);
      expect(await ids({ status: { class: 5 } })).toEqual(['b:500']);
      expect(await ids({ status: { exact: 202 } })).toEqual(['c:202']);
      expect(await ids({ failed: true })).toEqual(['a:400', 'b:500']);
      expect(await ids({ since: 6500 })).toEqual(['a:400', 'c:202']);
      expect(await ids({ replays: false })).toEqual(['a:400', 'b:500', 'a:200']);
      const page = await store.requests.list({ limit: 2 });
      expect(await ids({ beforeSeq: page.at(-1)?.seq })).toEqual(['b:500', 'a:200']);
      const newest = await store.requests.get('a');
      expect(newest).toMatchObject({
        status: 400,
        code: 'TEXT_REQUIRED',
        truncated: false,
        headers: record('a').headers,
      });
      expect(newest?.body.toString()).toBe('{"n":1}');
      expect((await store.requests.get('c'))?.runIds).toEqual(['r9']);
      expect((await store.requests.get('c'))?.eventType).toBe('push');
      expect((await store.requests.list({ limit: 10 })).map((r) => r.eventType)).toEqual([
        undefined,
        'push',
        undefined,
        undefined,
      ]);
      expect(await store.requests.countSince(6000)).toEqual({ total: 3, failed: 2 });
      await store.group.write((w) => w.requests.markReplayed('b', 9000));
      expect(await ids({ replayed: true })).toEqual(['b:500']);
      // Ages by the store's clock: older than received at 6500 ms of the epoch, then the oldest.
      const bytes = (await store.log.size()).requests.bytes;
      const aged = await store.log.pruneOlderThan('requests', Date.now() - 6500, 1000);
      expect(aged.rows).toBe(2);
      expect((await store.log.pruneOldest('requests', 1)).rows).toBe(1);
      expect(await ids({})).toEqual(['a:400']);
      const left = (await store.log.size()).requests;
      expect(left.rows).toBe(1);
      // Four rows of one size: each counts a quarter of the bytes.
      expect(aged.bytes).toBe(bytes / 2);
      expect(left.bytes).toBe(bytes / 4);
    });

    it('finds requests by event type, by id or text (event type, body), by time range and by refusal', async () => {
      const store = make();
      const body = (text: string) => ({ body: Buffer.from(text), bodyBytes: Buffer.byteLength(text) });
      await store.commit((w) => {
        w.requests.insert(record('p1', { eventType: 'push', receivedAt: 1000, ...body('{"ref":"refs/heads/Main"}') }));
        w.requests.insert(
          record('i1', { eventType: 'issues', receivedAt: 2000, ...body('{"title":"Café 100% _done_"}') }),
        );
        w.requests.insert(
          record('s1', { eventType: 'payment_intent.succeeded', receivedAt: 3000, ...body('{"path":"C:\\tmp"}') }),
        );
        w.requests.insert(
          record('x1', {
            status: 401,
            code: 'UNAUTHORIZED',
            authenticated: false,
            receivedAt: 4000,
            body: Buffer.alloc(0),
            bodyWhole: false,
          }),
        );
      });
      const ids = async (filter: object) => (await store.requests.list({ limit: 10, ...filter })).map((r) => r.id);
      expect(await ids({ eventType: 'push' })).toEqual(['p1']);
      expect(await ids({ eventType: 'PUSH' })).toEqual([]);
      // An id exactly; text in the event type or the body, ASCII letters in any case.
      expect(await ids({ search: 'i1' })).toEqual(['i1']);
      expect(await ids({ search: 'INTENT' })).toEqual(['s1']);
      expect(await ids({ search: 'heads/main' })).toEqual(['p1']);
      expect(await ids({ search: 'café' })).toEqual(['i1']);
      // LIKE's wildcards and its escape are plain characters in a search.
      expect(await ids({ search: '100%' })).toEqual(['i1']);
      expect(await ids({ search: '_done_' })).toEqual(['i1']);
      expect(await ids({ search: 'e_d' })).toEqual([]);
      expect(await ids({ search: '%' })).toEqual(['i1']);
      expect(await ids({ search: 'C:\\tmp' })).toEqual(['s1']);
      expect(await ids({ search: 'nothing like it' })).toEqual([]);
      expect(await ids({ since: 2000, until: 4000 })).toEqual(['s1', 'i1']);
      expect(await ids({ refused: true })).toEqual(['x1']);
      expect(await ids({ refused: false, search: 'e' })).toEqual(['s1', 'i1', 'p1']);
    });

    it('keeps a refused request: its client, reason, credentials by name, no body; counts rows and bytes alike', async () => {
      const store = make();
      const refused = record('r', {
        client: '203.0.113.9',
        status: 401,
        code: 'SIGNATURE_INVALID',
        reason: 'invalid webhook signature: no signature matched',
        mappingId: 'gh',
        eventIds: [],
        headers: { 'x-hub-signature-256': '[masked]', 'user-agent': 'GitHub-Hookshot/1' },
        credentials: { 'x-hub-signature-256': { verified: false } },
        authenticated: false,
        body: Buffer.alloc(0),
        bodyBytes: 512,
        bodyWhole: false,
      });
      const aggregate = record('m', { status: 401, moreRefused: 57, authenticated: false, bodyWhole: false });
      await store.commit((w) => {
        w.requests.insert(refused);
        w.requests.insert(aggregate);
      });
      const { body: _body, ...expected } = refused;
      const kept = await store.requests.get('r');
      expect(kept?.body).toEqual(Buffer.alloc(0));
      expect(kept).toMatchObject(expected);
      expect((await store.requests.list({ limit: 1 }))[0]).toMatchObject({ id: 'm', moreRefused: 57 });
      // Two rows: their headers' and URLs' bytes and 512 each (the body is empty, or 7 bytes),
      // counted apart from the authenticated records.
      const headerBytes = JSON.stringify(refused.headers).length + JSON.stringify(aggregate.headers).length;
      expect(await store.log.size()).toMatchObject({
        refused: { rows: 2, bytes: headerBytes + 2 * '/hooks/note'.length + 7 + 2 * 512 },
        requests: { rows: 0, bytes: 0 },
      });
    });

    it('counts and prunes refused records apart from authenticated ones, oldest first, by age too', async () => {
      const store = make();
      const refused = (id: string, receivedAt: number) =>
        record(id, { receivedAt, status: 401, authenticated: false, body: Buffer.alloc(0), bodyWhole: false });
      await store.commit((w) => {
        w.requests.insert(record('a1', { receivedAt: 1000 }));
        w.requests.insert(refused('x1', 1500));
        w.requests.insert(record('a2', { receivedAt: 2000 }));
        w.requests.insert(refused('x2', 2500));
        w.requests.insert(refused('x3', Date.now()));
      });
      const size = await store.log.size();
      expect([size.requests.rows, size.refused.rows]).toEqual([2, 3]);
      // The oldest refused record goes, never the older authenticated one.
      expect((await store.log.pruneOldest('refused', 1)).rows).toBe(1);
      const ids = async () => (await store.requests.list({ limit: 10 })).map((r) => r.id);
      expect(await ids()).toEqual(['x3', 'x2', 'a2', 'a1']);
      expect((await store.log.pruneOlderThan('refused', 60_000, 1000)).rows).toBe(1);
      expect(await ids()).toEqual(['x3', 'a2', 'a1']);
      expect((await store.log.pruneOldest('requests', 1)).rows).toBe(1);
      expect(await ids()).toEqual(['x3', 'a2']);
      const left = await store.log.size();
      expect([left.requests.rows, left.refused.rows]).toEqual([1, 1]);
    });

    it('frees the bytes of exactly the rows it prunes, the first stored first among records of one time', async () => {
      const store = make();
      // Six records of one time, each body 100 bytes longer than the one before.
      const sized = (i: number) =>
        record(`t${i}`, { receivedAt: 1000, body: Buffer.alloc(100 * (i + 1), 'x'), bodyBytes: 100 * (i + 1) });
      await store.commit((w) => {
        for (let i = 0; i < 6; i++) w.requests.insert(sized(i));
      });
      const bytesOf = (...i: number[]) =>
        i.reduce(
          (sum, n) => sum + 100 * (n + 1) + JSON.stringify(sized(n).headers).length + '/hooks/note'.length + 512,
          0,
        );
      const ids = async () => (await store.requests.list({ limit: 10 })).map((r) => r.id);
      expect(await store.log.pruneOldest('requests', 2)).toEqual({ rows: 2, bytes: bytesOf(0, 1) });
      expect(await ids()).toEqual(['t5', 't4', 't3', 't2']);
      expect(await store.log.pruneOlderThan('requests', 60_000, 3)).toEqual({ rows: 3, bytes: bytesOf(2, 3, 4) });
      expect(await ids()).toEqual(['t5']);
      expect((await store.log.size()).requests).toEqual({ rows: 1, bytes: bytesOf(5) });
    });

    it("keeps a request's receipt with its record and its kept failure, and a forced replay's mark", async () => {
      const store = make();
      const byToken = { by: 'token', via: 'bearer', credential: 'fp-token', bodyRead: true } as const;
      const bySignature = {
        by: 'signature',
        credentials: { gh: 'fp-gh' },
        bodyRead: true,
        webhookId: 'delivery-1',
        replayKey: 'req-0',
      } as const;
      await store.group.write((w) => {
        w.requests.insert(record('t', { receipt: byToken }));
        w.requests.insert(record('s', { receipt: bySignature, replayOf: 'req-0', forced: true }));
        w.requests.insert(record('none'));
        w.failedRequests.insert({
          ...{ id: 'f2', requestId: 's', subPath: 'gh', url: '/hooks/gh', headers: {}, body: Buffer.from('{}') },
          ...{ code: 'TRANSFORM_FAILED', error: 'boom', createdAt: 1, receipt: bySignature },
          ...{ credentials: {}, redacted: false },
        });
      });
      expect((await store.requests.get('t'))?.receipt).toEqual(byToken);
      expect(await store.requests.get('s')).toMatchObject({ receipt: bySignature, forced: true, replayOf: 'req-0' });
      const none = await store.requests.get('none');
      expect(none?.receipt).toBeUndefined();
      expect(none?.forced).toBeUndefined();
      expect((await store.failedRequests.forRequest('s'))?.receipt).toEqual(bySignature);
      // Lists show the mark, never the receipt.
      const listed = await store.requests.list({ limit: 10 });
      expect(listed.map((r) => [r.id, r.forced ?? false, 'receipt' in r])).toEqual([
        ['none', false, false],
        ['s', true, false],
        ['t', false, false],
      ]);
    });

    it('keeps failures for replay and purges expired idempotency records', async () => {
      const store = make();
      await store.commit((w) => {
        w.failedRequests.insert({
          id: 'f1',
          requestId: 'req-1',
          subPath: 'note',
          url: '/hooks/note',
          headers: { a: 'b' },
          credentials: {},
          redacted: false,
          body: Buffer.from([0, 1, 2, 255]),
          code: 'TRANSFORM_FAILED',
          error: 'boom',
          createdAt: 1,
        });
        w.idempotency.put({
          scope: 'agent',
          key: 'k1',
          bodyHash: 'h',
          status: 202,
          response: '{}',
          createdAt: 1,
          // A lifetime of 0: expired at once, by whichever clock the store keeps.
          expiresAt: 1,
        });
        w.idempotency.put({
          scope: 'agent',
          key: 'k2',
          bodyHash: 'h',
          status: 202,
          response: null,
          createdAt: Date.now(),
          expiresAt: Date.now() + 86_400_000,
        });
      });
      const failure = await store.failedRequests.forRequest('req-1');
      expect(failure).toMatchObject({ id: 'f1', subPath: 'note', headers: { a: 'b' }, code: 'TRANSFORM_FAILED' });
      expect(failure?.body).toEqual(Buffer.from([0, 1, 2, 255]));
      expect(await store.failedRequests.forRequest('req-2')).toBeUndefined();
      expect(await store.idempotency.purgeExpired()).toBe(1);
    });

    it('commits group writes in the order they were made, across turns', async () => {
      const store = make();
      await store.commit((w) => w.runs.insert(run('order')));
      const writes: Promise<void>[] = [];
      for (let i = 0; i < 5; i++) {
        writes.push(store.group.write((w) => w.runs.markRunning('order', i)));
        await new Promise((resolve) => setImmediate(resolve));
      }
      writes.push(store.group.write((w) => w.runs.finish('order', { status: 'ok', output: 'last' }, 9)));
      await Promise.all(writes);
      expect(await store.runs.get('order')).toMatchObject({ status: 'ok', startedAt: 4, finishedAt: 9 });
    });

    it('commits the writes of one turn together, and fails a bad one alone', async () => {
      const store = make();
      await store.commit((w) => w.runs.insert(run('dup')));
      const outcomes = await Promise.allSettled([
        store.group.write((w) => w.events.insert(event('g1'))),
        store.group.write((w) => {
          w.events.insert(event('lost'));
          w.runs.insert(run('dup'));
        }),
        store.group.write((w) => {
          w.events.insert(event('g2'));
          return 'value';
        }),
      ]);
      expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect((outcomes[2] as PromiseFulfilledResult<string>).value).toBe('value');
      expect((await store.events.list('main', 100)).map((e) => e.id)).toEqual(['g1', 'g2']);
    });

    it('keeps why a run waits until it tries again, and nothing of it once the run is over', async () => {
      const store = make();
      await store.commit((w) => w.runs.insert(run('waits')));
      await store.commit((w) => w.runs.recordWait('waits', { reason: 'breaker open for fake/m until …', until: 9000 }));
      expect(await store.runs.get('waits')).toMatchObject({
        waiting: 'breaker open for fake/m until …',
        notBefore: 9000,
      });
      await store.commit((w) => w.runs.recordWait('waits', null));
      const cleared = await store.runs.get('waits');
      expect(cleared?.waiting).toBeUndefined();
      expect(cleared?.notBefore).toBeUndefined();
      await store.commit((w) => w.runs.markSummarized('waits', 10));
      await store.commit((w) => w.runs.recordWait('waits', { reason: 'late' }));
      expect((await store.runs.get('waits'))?.waiting).toBeUndefined();
    });

    it('cancels an unsummarized run whatever it reached, keeping its reply, and never a summarized one', async () => {
      const store = make();
      await store.commit((w) => {
        w.runs.insert(run('queued'));
        w.runs.insert(run('delivering'));
        w.runs.insert(run('over'));
      });
      await store.commit((w) => {
        w.runs.requestCancel('queued', 5);
        w.runs.finish('delivering', { status: 'ok', output: 'the reply' }, 6);
        w.runs.finish('over', { status: 'ok', output: 'done' }, 6);
        w.runs.recordDelivery('over', { status: 'sent', channel: 'chatnet', to: '42' });
        w.runs.markSummarized('over', 7);
      });
      expect((await store.runs.get('queued'))?.cancelRequestedAt).toBe(5);
      await store.commit((w) => {
        for (const id of ['queued', 'delivering', 'over']) w.runs.cancel(id, 'cancelled by the operator', 8);
        w.runs.requestCancel('over', 9);
      });
      expect(await store.runs.get('queued')).toMatchObject({
        status: 'cancelled',
        error: 'cancelled by the operator',
        finishedAt: 8,
        delivery: { status: 'skipped', reason: 'cancelled' },
      });
      expect(await store.runs.get('delivering')).toMatchObject({
        status: 'cancelled',
        output: 'the reply',
        finishedAt: 6,
        delivery: { status: 'skipped', reason: 'cancelled' },
      });
      const over = await store.runs.get('over');
      expect(over).toMatchObject({ status: 'ok', delivery: { status: 'sent' }, summarizedAt: 7 });
      expect(over?.cancelRequestedAt).toBeUndefined();
      expect(await store.runs.countByStatus()).toMatchObject({ cancelled: 2, ok: 1 });
    });

    it("keeps a run's first result: a late second finish (a node that lost the lease) changes nothing", async () => {
      const store = make();
      await store.commit((w) => w.runs.insert(run('late')));
      await store.commit((w) => w.runs.finish('late', { status: 'ok', output: 'first' }, 10));
      await store.group.write((w) => {
        w.runs.markRunning('late', 11);
        w.runs.finish('late', { status: 'error', error: 'second' }, 12);
      });
      expect(await store.runs.get('late')).toMatchObject({ status: 'ok', output: 'first', finishedAt: 10 });
    });

    it('keeps alerts append only: one firing per key, one recovery per firing, open ones listed newest first', async () => {
      const store = make();
      const alert = (id: string, extra: object) => ({
        id,
        at: 7000,
        kind: 'firing' as const,
        condition: 'mappingFailures' as const,
        source: 'github',
        count: 5,
        link: 'http://gw/ui/#/requests/r1',
        text: `alert ${id}`,
        ...extra,
      });
      const first = alert('f1', { key: 'k1', lastError: 'TRANSFORM_FAILED (HTTP 500)' });
      expect(await store.alerts.insert(first)).toBe(true);
      // A second node deciding the same firing writes the same key: not stored, not sent.
      expect(await store.alerts.insert(alert('f1b', { key: 'k1' }))).toBe(false);
      expect(await store.alerts.insert(alert('f2', { key: 'k2', source: 'stripe' }))).toBe(true);
      expect((await store.alerts.latestFiring('mappingFailures', 'github'))?.id).toBe('f1');
      expect(await store.alerts.latestFiring('mappingFailures', 'gitlab')).toBeUndefined();
      const recovery = alert('r1', { kind: 'recovered', recovers: 'f1', at: 8000, count: 7 });
      expect(await store.alerts.insert(recovery)).toBe(true);
      expect(await store.alerts.insert(alert('r1b', { kind: 'recovered', recovers: 'f1', at: 8001 }))).toBe(false);
      expect(await store.alerts.latestFiring('mappingFailures', 'github')).toMatchObject({
        id: 'f1',
        lastError: 'TRANSFORM_FAILED (HTTP 500)',
        recoveredAt: 8000,
      });
      const all = await store.alerts.list({ limit: 10 });
      expect(all.map((a) => a.id)).toEqual(['r1', 'f2', 'f1']);
      expect(all[0]).toMatchObject({ kind: 'recovered', recovers: 'f1', count: 7 });
      expect(all[0]).not.toHaveProperty('recoveredAt');
      expect((await store.alerts.list({ limit: 10, open: true })).map((a) => a.id)).toEqual(['f2']);
      const [newest] = await store.alerts.list({ limit: 1 });
      expect((await store.alerts.list({ limit: 10, beforeSeq: newest?.seq })).map((a) => a.id)).toEqual(['f2', 'f1']);
    });

    it('stores an event once: a second insert of its id is no change (a run summarised by two nodes)', async () => {
      const store = make();
      await store.commit((w) => w.events.insert(event('once')));
      await store.group.write((w) => w.events.insert({ ...event('once'), text: 'again' }));
      const listed = await store.events.list('main', 100);
      expect(listed.map((e) => [e.id, e.text])).toEqual([['once', event('once').text]]);
    });
  });
}

contract('SQLite', sqlite, true);
contract('PostgreSQL', postgres, postgresTestsRun);
