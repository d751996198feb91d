import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Accepted,
  type Action,
  type ActionSink,
  createModelCatalog,
  parseAgentBody,
  type RequestLogRecord,
  startsItsSession,
} from '../../src/actions/index.js';
import { loadConfig } from '../../src/config/index.js';
import { hookdError } from '../../src/errors.js';
import { createPgContract, createPgPool } from '../../src/store/postgres/contract.js';
import { migratePostgres } from '../../src/store/postgres/migrate.js';
import { createPgSink } from '../../src/store/postgres/sink.js';
import { createStore, createStoreSink } from '../../src/store/sqlite/index.js';
import { agentAction, wakeAction } from '../helpers/actions.js';
import { until } from '../helpers/http.js';
import { type PgCluster, postgresTestsRun, startPgCluster } from '../helpers/postgres.js';

/**
 * The action sink's contract (docs/operations.md#idempotency, docs/runtime.md#request-log-and-replay, docs/scale.md), one suite run against the SQLite store and
 * the PostgreSQL store: what a hook request's accept writes, and what replay and idempotency read.
 */

interface Subject {
  sink: ActionSink;
  committed: { actions: readonly Action[]; accepted: readonly Accepted[] }[];
  /** Ids present in a table. */
  ids(table: 'events' | 'runs'): Promise<string[]>;
}

type Make = (options?: { admit?: (actions: readonly Action[]) => void }) => Promise<Subject>;

let cluster: PgCluster | undefined;
let pool: pg.Pool | undefined;
const cleanups: (() => unknown)[] = [];

beforeAll(async () => {
  if (!postgresTestsRun) return;
  cluster = await startPgCluster();
  pool = createPgPool(cluster.url, { max: 8 });
  const client = await pool.connect();
  await migratePostgres(client);
  client.release();
}, 30_000);

afterAll(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
  await pool?.end();
  await cluster?.stop();
});

const sqlite: Make = async (options = {}) => {
  const store = createStore({ path: ':memory:', synchronous: 'normal' });
  cleanups.push(() => store.close());
  const committed: Subject['committed'] = [];
  const sink = createStoreSink(store, {
    ...options,
    onCommitted: (actions, accepted) => committed.push({ actions, accepted }),
  });
  return {
    sink,
    committed,
    ids: async (table) => (store.db.prepare(`SELECT id FROM ${table}`).all() as { id: string }[]).map((r) => r.id),
  };
};

const postgres: Make = async (options = {}) => {
  if (!pool) throw new Error('no cluster');
  const db = pool;
  const committed: Subject['committed'] = [];
  const sink = createPgSink(db, createPgContract(db), {
    ...options,
    onCommitted: (actions, accepted) => committed.push({ actions, accepted }),
  });
  return {
    sink,
    committed,
    ids: async (table) => (await db.query<{ id: string }>(`SELECT id FROM ${table}`)).rows.map((r) => r.id),
  };
};

function recordFor(id: string, accepted: readonly Accepted[], body = '{"n":1}'): RequestLogRecord {
  return {
    id,
    receivedAt: Date.now(),
    path: 'note',
    url: '/hooks/note',
    mappingId: 'note',
    status: 200,
    eventIds: accepted.flatMap((a) => (a.kind === 'wake' ? [a.eventId] : [])),
    runIds: accepted.flatMap((a) => (a.kind === 'agent' ? [a.runId] : [])),
    durationMs: 3,
    headers: { 'content-type': 'application/json' },
    body: Buffer.from(body),
    bodyBytes: body.length,
    truncated: false,
    redacted: false,
    credentials: {},
    authenticated: true,
    bodyWhole: true,
  };
}

function contract(name: string, make: Make, runs: boolean) {
  describe.skipIf(!runs)(`the action sink on ${name}`, () => {
    it('commits a request’s actions and its log record together, then tells the runtime', async () => {
      const s = await make();
      const accepted = await s.sink.accept([wakeAction('hello'), agentAction('work')], {
        requestId: `${name}-req-1`,
        record: (a) => recordFor(`${name}-req-1`, a, '{"text":"hello","\u00e9":"\u00ff"}'),
      });
      expect(accepted.map((a) => a.kind)).toEqual(['wake', 'agent']);
      const [event, run] = accepted as [Extract<Accepted, { kind: 'wake' }>, Extract<Accepted, { kind: 'agent' }>];
      expect(run.sessionKey).toBe('hook:work');
      expect(await s.ids('events')).toContain(event.eventId);
      expect(await s.ids('runs')).toContain(run.runId);
      expect(s.committed).toEqual([{ actions: [wakeAction('hello'), agentAction('work')], accepted }]);
      const stored = await s.sink.findRequest(`${name}-req-1`);
      expect(stored?.record).toMatchObject({
        id: `${name}-req-1`,
        path: 'note',
        mappingId: 'note',
        status: 200,
        eventIds: [event.eventId],
        runIds: [run.runId],
        headers: { 'content-type': 'application/json' },
        truncated: false,
      });
      expect(stored?.record?.body.toString()).toBe('{"text":"hello","\u00e9":"\u00ff"}');
      expect(await s.sink.findRequest('nobody')).toBeUndefined();
    });

    it('gives a run whose session key it made (the request named none) the id the key ends in', async () => {
      const s = await make();
      const options = { models: createModelCatalog(loadConfig({ data: {}, env: {} })) };
      const made = parseAgentBody({ message: 'new' }, options);
      const [first] = await s.sink.accept([made], { requestId: `${name}-made-1` });
      // A later request continues the session by naming the key it was given.
      const [second] = await s.sink.accept([parseAgentBody({ message: 'on', sessionKey: made.sessionKey }, options)], {
        requestId: `${name}-made-2`,
      });
      if (first?.kind !== 'agent' || second?.kind !== 'agent') throw new Error('two runs expected');
      expect(first.sessionKey).toBe(`hook:${first.runId}`);
      expect(second.sessionKey).toBe(first.sessionKey);
      expect(second.runId).not.toBe(first.runId);
      expect(await s.ids('runs')).toEqual(expect.arrayContaining([first.runId, second.runId]));
      expect([first, second].map((a) => startsItsSession({ id: a.runId, sessionKey: a.sessionKey }))).toEqual([
        true,
        false,
      ]);
    });

    it('accepts many requests at once, each answered after its commit', async () => {
      const s = await make();
      const all = await Promise.all(
        Array.from({ length: 120 }, (_, i) =>
          s.sink.accept([i % 2 ? agentAction(`m${i}`) : wakeAction(`w${i}`)], { requestId: `r${i}` }),
        ),
      );
      const ids = all.flat().map((a) => (a.kind === 'wake' ? a.eventId : a.runId));
      expect(new Set(ids).size).toBe(120);
      const stored = new Set([...(await s.ids('events')), ...(await s.ids('runs'))]);
      expect(ids.every((id) => stored.has(id))).toBe(true);
    });

    it('remembers an idempotent answer, built from what was accepted', async () => {
      const s = await make();
      const key = `${name}-key-1`;
      const accepted = await s.sink.accept([agentAction('once')], {
        requestId: 'idem-1',
        idempotency: {
          scope: 'agent',
          key,
          bodyHash: 'hash-1',
          respond: (a) => ({ status: 202, body: { ok: true, runId: a[0]?.kind === 'agent' ? a[0].runId : null } }),
        },
      });
      const runId = accepted[0]?.kind === 'agent' ? accepted[0].runId : '';
      expect(await s.sink.findAnswer('agent', key)).toEqual({
        bodyHash: 'hash-1',
        status: 202,
        body: { ok: true, runId },
      });
      expect(await s.sink.findAnswer('agent', 'other')).toBeUndefined();
      expect(await s.sink.findAnswer('wake', key)).toBeUndefined();
    });

    it('logs requests that stored nothing, keeps failures for replay, and marks both replayed', async () => {
      const s = await make();
      s.sink.recordRequest({ ...recordFor(`${name}-fail-1`, []), status: 500, code: 'TRANSFORM_FAILED' });
      s.sink.recordFailure({
        requestId: `${name}-fail-1`,
        subPath: 'note',
        url: '/hooks/note',
        headers: { 'content-type': 'application/json' },
        credentials: {},
        body: Buffer.from('{"whole":"body"}'),
        redacted: false,
        code: 'TRANSFORM_FAILED',
        error: 'transform failed: boom',
      });
      const stored = await until(async () => {
        const found = await s.sink.findRequest(`${name}-fail-1`);
        return found?.record && found.failure ? found : undefined;
      }, 'the record and the failure');
      expect(stored.record).toMatchObject({ status: 500, code: 'TRANSFORM_FAILED', eventIds: [], runIds: [] });
      expect(stored.failure).toMatchObject({
        code: 'TRANSFORM_FAILED',
        error: 'transform failed: boom',
        subPath: 'note',
      });
      expect(stored.failure?.body.toString()).toBe('{"whole":"body"}');
      s.sink.markReplayed(`${name}-fail-1`);
      const replayed = await until(async () => {
        const found = await s.sink.findRequest(`${name}-fail-1`);
        return (found?.record as { replayedAt?: number } | undefined)?.replayedAt ? found : undefined;
      }, 'replayedAt');
      expect((replayed.record as { replayedAt?: number }).replayedAt).toEqual(expect.any(Number));
    });

    it('writes nothing for a request its admission refuses', async () => {
      const s = await make({
        admit: () => {
          throw hookdError('QUEUE_FULL');
        },
      });
      const before = await s.ids('runs');
      expect(() => s.sink.accept([agentAction('refused')], { requestId: 'q' })).toThrow(/queue/i);
      expect(await s.ids('runs')).toEqual(before);
      expect(s.committed).toEqual([]);
    });
  });
}

contract('SQLite', sqlite, true);
contract('PostgreSQL', postgres, postgresTestsRun);

describe.skipIf(!postgresTestsRun)('the action sink on PostgreSQL, several nodes', () => {
  it('lets one node of two take an idempotency key sent to both at once', async () => {
    const [a, b] = [await postgres(), await postgres()];
    const intent = (bodyHash: string) => ({
      scope: 'agent',
      key: 'shared-key',
      bodyHash,
      respond: () => ({ status: 202, body: { ok: true } }),
    });
    const outcomes = await Promise.allSettled([
      a.sink.accept([agentAction('node-a')], { requestId: 'na', idempotency: intent('h') }),
      b.sink.accept([agentAction('node-b')], { requestId: 'nb', idempotency: intent('h') }),
    ]);
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    const refused = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult;
    expect(refused.reason).toMatchObject({ code: 'IDEMPOTENCY_IN_FLIGHT' });
    const runs = await a.ids('runs');
    const winner = outcomes.find((o) => o.status === 'fulfilled') as PromiseFulfilledResult<readonly Accepted[]>;
    const loserMessage = a.committed.length === 1 ? 'node-b' : 'node-a';
    expect(runs).toContain((winner.value[0] as Extract<Accepted, { kind: 'agent' }>).runId);
    expect([...a.committed, ...b.committed]).toHaveLength(1);
    expect(JSON.stringify([...a.committed, ...b.committed])).not.toContain(loserMessage);
  });

  it('takes a key sent twice in one group commit once: the first request has it, the second is refused', async () => {
    const s = await postgres();
    const intent = { scope: 'agent', key: 'twice', bodyHash: 'h', respond: () => ({ status: 202, body: null }) };
    const outcomes = await Promise.allSettled([
      s.sink.accept([agentAction('first')], { requestId: 't1', idempotency: intent }),
      s.sink.accept([agentAction('second')], { requestId: 't2', idempotency: intent }),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected']);
    expect((outcomes[1] as PromiseRejectedResult).reason).toMatchObject({ code: 'IDEMPOTENCY_IN_FLIGHT' });
    expect(s.committed.map((c) => (c.actions[0] as { message: string }).message)).toEqual(['first']);
    const { rows } = await (pool as pg.Pool).query("SELECT message FROM runs WHERE request_id IN ('t1', 't2')");
    expect(rows).toEqual([{ message: 'first' }]);
  });

  it('fails one bad request of a group commit alone, and stores U+0000 as U+FFFD', async () => {
    const s = await postgres();
    // A timeout past PostgreSQL's integer fails its insert; the config schema never lets one through.
    const bad = { ...agentAction('bad'), timeoutSeconds: 2 ** 40 } as Action;
    const outcomes = await Promise.allSettled([
      s.sink.accept([wakeAction('fine 1')], { requestId: 'b1' }),
      s.sink.accept([bad], { requestId: 'b2' }),
      s.sink.accept([wakeAction('nul \u0000 text')], { requestId: 'b3' }),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(s.committed).toHaveLength(2);
    const eventId = ((outcomes[2] as PromiseFulfilledResult<readonly Accepted[]>).value[0] as { eventId: string })
      .eventId;
    const { rows } = await (pool as pg.Pool).query('SELECT text FROM events WHERE id = $1', [eventId]);
    expect(rows[0]?.text).toBe('nul \uFFFD text');
  });

  it("takes over an expired key, expired by the database's clock", async () => {
    const make = () => {
      if (!pool) throw new Error('no cluster');
      return createPgSink(pool, createPgContract(pool), { idempotencyTtlSeconds: 60 });
    };
    const intent = { scope: 'agent', key: 'expiring', bodyHash: 'h', respond: () => ({ status: 202, body: null }) };
    await make().accept([agentAction('first')], { requestId: 'e1', idempotency: intent });
    await expect(make().accept([agentAction('early')], { requestId: 'e2', idempotency: intent })).rejects.toMatchObject(
      {
        code: 'IDEMPOTENCY_IN_FLIGHT',
      },
    );
    // 61 s pass in the database.
    await pool?.query(
      "UPDATE idempotency SET created_at = created_at - 61000, expires_at = expires_at - 61000 WHERE key = 'expiring'",
    );
    await expect(make().accept([agentAction('later')], { requestId: 'e3', idempotency: intent })).resolves.toHaveLength(
      1,
    );
  });

  it("keeps a key alive by the database's clock whatever the clock of the node that wrote it or asks", async () => {
    const DAY_MS = 86_400_000;
    const node = (skewMs: number) => {
      if (!pool) throw new Error('no cluster');
      return createPgSink(pool, createPgContract(pool), { idempotencyTtlSeconds: 60, now: () => Date.now() + skewMs });
    };
    const intent = { scope: 'agent', key: 'skewed', bodyHash: 'h', respond: () => ({ status: 202, body: null }) };
    // Written by a node 8 days behind: its key lives 60 s from the database's now, not 8 days ago.
    await node(-8 * DAY_MS).accept([agentAction('first')], { requestId: 's1', idempotency: intent });
    await expect(
      node(0).accept([agentAction('retry')], { requestId: 's2', idempotency: intent }),
    ).rejects.toMatchObject({
      code: 'IDEMPOTENCY_IN_FLIGHT',
    });
    // A node 8 days ahead still finds the answer, and purging from any node keeps it.
    expect(await node(8 * DAY_MS).findAnswer('agent', 'skewed')).toMatchObject({ status: 202 });
    expect(await createPgContract(pool as pg.Pool).idempotency.purgeExpired()).toBe(0);
  });
});

describe.skipIf(!postgresTestsRun)('a failed request on PostgreSQL', () => {
  it('is never logged before its kept failure: a record shown can be replayed', async () => {
    const db = pool as pg.Pool;
    // Statements that write a kept failure wait for `release`; every other one goes at once.
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const texts: string[] = [];
    let pending = 0;
    let held = 0;
    /** `target` whose queries (a text, or a config with its time-out) are seen and held as above. */
    const gate = <T extends pg.Pool | pg.PoolClient>(target: T): T =>
      new Proxy(target, {
        get(inner, prop, receiver) {
          if (prop === 'connect' && inner === db) return async () => gate(await db.connect());
          const value = Reflect.get(inner, prop, receiver);
          if (prop !== 'query') return typeof value === 'function' ? value.bind(inner) : value;
          return async (query: string | pg.QueryConfig, values?: unknown[]) => {
            const text = typeof query === 'string' ? query : query.text;
            texts.push(text);
            pending++;
            const holds = text.includes('INSERT INTO failed_requests');
            if (holds) held++;
            try {
              if (holds) await released;
              return await (inner as pg.Pool).query(query as string, values);
            } finally {
              pending--;
            }
          };
        },
      });
    const gated = gate(db);
    const sink = createPgSink(gated, createPgContract(db), {});
    const id = 'pg-failure-first';
    sink.recordFailure({
      requestId: id,
      subPath: 'note',
      url: '/hooks/note',
      headers: {},
      credentials: {},
      body: Buffer.from('{}'),
      redacted: false,
      code: 'TRANSFORM_FAILED',
      error: 'transform failed: boom',
    });
    sink.recordRequest({ ...recordFor(id, []), status: 500, code: 'TRANSFORM_FAILED' });
    // Once the record's insert was sent and all but the held statements are done, a record in
    // the table would be one whose failure is not.
    await until(
      async () => (texts.some((t) => t.includes('INSERT INTO requests')) && pending === held ? true : undefined),
      'the record sent',
    );
    const shown = await db.query('SELECT id FROM requests WHERE id = $1', [id]);
    expect(shown.rows).toEqual([]);
    release();
    const stored = await until(async () => {
      const found = await sink.findRequest(id);
      return found?.record && found.failure ? found : undefined;
    }, 'the record and the failure');
    expect(stored.failure).toMatchObject({ code: 'TRANSFORM_FAILED' });
  });
});
