import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { call, until } from '../helpers/http.js';
import { type SuiteStore, suiteStore, suiteStores } from '../helpers/postgres.js';
import { ADMIN, eventsOf, HOOK, idOf, recorded, runsOf, SECRETS, world } from '../helpers/replay-world.js';

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

let store: SuiteStore;

describe.each(suiteStores)('replays and idempotency keys (docs/runtime.md#request-log-and-replay) on %s', (kind) => {
  beforeAll(() => {
    store = suiteStore(kind);
  });
  afterAll(() => store.stop());

  it("makes one run of a replay and the sender's retry, whichever comes first", async () => {
    const w = await world(store, cleanups);
    const failedFirst = await w.hook('flaky', { n: 1 }, { ...HOOK, 'idempotency-key': 'key-1' });
    const failedSecond = await w.hook('flaky', { n: 2 }, { ...HOOK, 'idempotency-key': 'key-2' });
    expect([failedFirst.status, failedSecond.status]).toEqual([500, 500]);
    await recorded(w, idOf(failedFirst));
    await recorded(w, idOf(failedSecond));
    w.fix();

    // The retry first (once the fixed transform is loaded), then the replay: the replay answers the retry's run.
    const retried = await until(async () => {
      const answer = await w.hook('flaky', { n: 1 }, { ...HOOK, 'idempotency-key': 'key-1' });
      return answer.status === 202 ? answer : undefined;
    }, 'the fixed transform');
    const replayed = await w.replay(idOf(failedFirst));
    expect(replayed.status).toBe(202);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(replayed.body).toEqual(retried.body);
    const record = await recorded(w, replayed.headers['x-request-id'] as string);
    expect(record).toMatchObject({ replayOf: idOf(failedFirst), status: 202, runIds: [] });
    expect(record.forced).toBeUndefined();
    await until(async () => (await w.admin(`/api/requests/${idOf(failedFirst)}`)).replayedAt, 'replayedAt');

    // The replay first, then the retry: the retry answers the replay's run.
    const replayedFirst = await w.replay(idOf(failedSecond));
    expect(replayedFirst.status).toBe(202);
    expect(replayedFirst.headers['idempotent-replayed']).toBeUndefined();
    const retriedAfter = await w.hook('flaky', { n: 2 }, { ...HOOK, 'idempotency-key': 'key-2' });
    expect(retriedAfter.status).toBe(202);
    expect(retriedAfter.headers['idempotent-replayed']).toBe('true');
    expect(retriedAfter.body).toEqual(replayedFirst.body);

    const runs = await runsOf(w);
    expect(runs.map((r) => r.runId).sort()).toEqual([retried.body.runId, replayedFirst.body.runId].sort());
  });

  it('makes one run of three concurrent replays of one request; the others answer its result', async () => {
    const w = await world(store, cleanups);
    const failed = await w.hook('flaky', { n: 7 });
    expect(failed.status).toBe(500);
    await recorded(w, idOf(failed));
    w.fix();
    // Another request proves the fixed transform is loaded, without replaying the one under test.
    const probe = await until(async () => {
      const answer = await w.hook('flaky', { n: 0 });
      return answer.status === 202 ? answer : undefined;
    }, 'the fixed transform');

    const answers = await Promise.all([1, 2, 3].map(() => w.replay(idOf(failed))));
    expect(answers.map((a) => a.status)).toEqual([202, 202, 202]);
    const fresh = answers.filter((a) => a.headers['idempotent-replayed'] === undefined);
    expect(fresh).toHaveLength(1);
    for (const answer of answers) expect(answer.body).toEqual(fresh[0]?.body);
    // Later replays answer it too (the request named no key: its id is its replays' key).
    expect((await w.replay(idOf(failed))).body).toEqual(fresh[0]?.body);
    const runs = (await runsOf(w)).map((r) => r.runId);
    expect(runs.sort()).toEqual([probe.body.runId, fresh[0]?.body.runId].sort());

    // Replayed anew on purpose: a run of its own, and its record says so.
    const forced = await w.replay(idOf(failed), { force: true });
    expect(forced.status).toBe(202);
    expect(forced.headers['idempotent-replayed']).toBeUndefined();
    expect(forced.body.runId).not.toBe(fresh[0]?.body.runId);
    const record = await recorded(w, forced.headers['x-request-id'] as string);
    expect(record).toMatchObject({ replayOf: idOf(failed), forced: true, runIds: [forced.body.runId] });
    expect(await runsOf(w)).toHaveLength(3);
    expect((await w.replay(idOf(failed), { force: 'yes' })).body.code).toBe('INVALID_FIELD');
  });

  it.runIf(kind === 'postgres')('makes one run of concurrent replays of one request sent to two nodes', async () => {
    const w = await world(store, cleanups);
    const failed = await w.hook('flaky', { n: 9 });
    expect(failed.status).toBe(500);
    await recorded(w, idOf(failed));
    w.fix();
    const other = await w.node();
    for (const url of [w.hookd.url, other.url])
      await until(async () => {
        const answer = await call(`${url}/hooks/flaky`, { headers: HOOK, json: { n: 0 } });
        return answer.status === 202 ? answer : undefined;
      }, 'the fixed transform on both nodes');
    const replayAt = (url: string) =>
      call(`${url}/api/requests/${encodeURIComponent(idOf(failed))}/replay`, { headers: ADMIN });
    const answers = await Promise.all([replayAt(w.hookd.url), replayAt(other.url), replayAt(other.url)]);
    expect(answers.map((a) => a.status)).toEqual([202, 202, 202]);
    expect(answers.filter((a) => a.headers['idempotent-replayed'] === undefined)).toHaveLength(1);
    expect(new Set(answers.map((a) => a.body.runId)).size).toBe(1);
    // The two probes and one replay.
    expect(await runsOf(w)).toHaveLength(3);
  });

  it("a signed delivery's replay answers its first answer (its delivery id is its key); force runs it anew", async () => {
    const w = await world(store, cleanups);
    const first = await w.signed('gh', { n: 3 }, SECRETS.gh, 'delivery-3');
    expect(first.status).toBe(200);
    await recorded(w, idOf(first));
    const replay = await w.replay(idOf(first));
    expect(replay.status).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(first.body);
    const forced = await w.replay(idOf(first), { force: true });
    expect(forced.status).toBe(200);
    expect(forced.body.eventId).not.toBe(first.body.eventId);
    // The sender's retry is still the remembered first answer: the forced replay did not touch it.
    const retry = await w.signed('gh', { n: 3 }, SECRETS.gh, 'delivery-3');
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.body.eventId).toBe(first.body.eventId);
    expect((await eventsOf(w)).filter((e) => e.text.includes('push 3'))).toHaveLength(2);
  });
});
