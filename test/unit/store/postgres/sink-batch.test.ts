import { describe, expect, it } from 'vitest';
import type { Accepted, RequestLogRecord } from '../../../../src/actions/index.js';
import { EVENTS_INSERT, REQUESTS_INSERT, RUNS_INSERT } from '../../../../src/store/postgres/rows.js';
import { prepareJob } from '../../../../src/store/postgres/sink.js';
import { batchInserts, type SinkItem, type SinkJob } from '../../../../src/store/postgres/sink-batch.js';
import { agentAction, wakeAction } from '../../../helpers/actions.js';

/**
 * What a PostgreSQL group commit writes (docs/scale.md): a request's accept prepared before its
 * commit, and a batch's inserts, one statement per table over `unnest` arrays.
 */

const NOW_MS = 1_700_000_000_000;
const now = () => NOW_MS;

function record(id: string): RequestLogRecord {
  return {
    id,
    receivedAt: NOW_MS - 5,
    path: 'note',
    url: '/hooks/note',
    status: 200,
    eventIds: [],
    runIds: [],
    durationMs: 1,
    headers: {},
    body: Buffer.from('{}'),
    bodyBytes: 2,
    truncated: false,
    redacted: false,
    credentials: {},
    authenticated: true,
    bodyWhole: true,
  };
}

/** A job as the sink queues it, from a prepared accept. */
function job(requestId: string, actions: SinkJob['actions'], withRecord = false): SinkJob {
  const prepared = prepareJob({ now, ttlMs: 60_000 }, actions, {
    requestId,
    ...(withRecord ? { record: () => record(requestId) } : {}),
  });
  return { ...prepared, resolve: () => undefined, reject: () => undefined };
}

const idsOf = (accepted: readonly Accepted[]) => accepted.map((a) => (a.kind === 'wake' ? a.eventId : a.runId));

describe("a PostgreSQL sink's accept, prepared before its commit", () => {
  it('gives each action an id, keys its idempotency row, and builds its record from what was accepted', () => {
    const seen: (readonly Accepted[])[] = [];
    const prepared = prepareJob({ now, ttlMs: 60_000 }, [wakeAction('w'), agentAction('a')], {
      requestId: 'r1',
      idempotency: {
        scope: 'agent',
        key: 'k1',
        bodyHash: 'h',
        respond: (accepted) => ({ status: 202, body: { runs: accepted.length } }),
      },
      record: (accepted) => {
        seen.push(accepted);
        return record('r1');
      },
    });
    expect(prepared.accepted.map((a) => a.kind)).toEqual(['wake', 'agent']);
    expect(new Set(idsOf(prepared.accepted)).size).toBe(2);
    expect(prepared.accepted[1]).toMatchObject({ sessionKey: 'hook:a' });
    expect(prepared.key).toBe('agent\u0000k1');
    // scope, key, body_hash, status, response, created_at, expires_at
    expect(prepared.idempotency).toEqual(['agent', 'k1', 'h', 202, '{"runs":2}', NOW_MS, NOW_MS + 60_000]);
    expect(seen).toEqual([prepared.accepted]);
    expect(prepared.record?.id).toBe('r1');
  });

  it('has neither key nor record when the request asks for none', () => {
    const prepared = prepareJob({ now, ttlMs: 60_000 }, [wakeAction('w')], { requestId: 'r2' });
    expect(prepared).not.toHaveProperty('key');
    expect(prepared).not.toHaveProperty('idempotency');
    expect(prepared).not.toHaveProperty('record');
    expect(prepared.createdAt).toBe(NOW_MS);
  });
});

describe("a PostgreSQL group commit's inserts", () => {
  it("writes the kept jobs' events and runs, a statement per table, and counts the runs queued", () => {
    const a = job('ra', [wakeAction('one'), agentAction('two')]);
    const b = job('rb', [wakeAction('three')]);
    const { statements, runs } = batchInserts([a, b], [], now);
    expect(statements.map((s) => s.text)).toEqual([EVENTS_INSERT, RUNS_INSERT]);
    const [events, queued] = statements.map((s) => s.values as readonly unknown[][]);
    // The first array is the ids, the seventh the requests (EVENT_COLUMNS); a run's id is first too.
    expect(events?.[0]).toEqual([idsOf(a.accepted)[0], idsOf(b.accepted)[0]]);
    expect(events?.[6]).toEqual(['ra', 'rb']);
    expect(queued?.[0]).toEqual([idsOf(a.accepted)[1]]);
    expect(runs).toBe(1);
  });

  it('writes nothing of a job left out (its key was taken elsewhere), and every record of the batch', () => {
    const kept = job('kept', [wakeAction('in')], true);
    const refused = job('refused', [agentAction('out')], true);
    const items: SinkItem[] = [
      { kind: 'job', job: kept },
      { kind: 'job', job: refused },
      { kind: 'record', record: record('stored-nothing') },
      { kind: 'replayed', id: 'old', at: NOW_MS },
    ];
    const { statements, runs } = batchInserts([kept], items, now);
    expect(statements.map((s) => s.text)).toEqual([EVENTS_INSERT, REQUESTS_INSERT]);
    const requests = statements[1]?.values ?? [];
    expect(requests[0]).toEqual(['kept', 'stored-nothing']);
    // Last, this node's clock: the records' times are moved onto the database's.
    expect(requests.at(-1)).toBe(NOW_MS);
    expect(runs).toBe(0);
  });

  it('has no statement for an empty batch', () => {
    expect(batchInserts([], [{ kind: 'replayed', id: 'x', at: NOW_MS }], now)).toEqual({ statements: [], runs: 0 });
  });
});
