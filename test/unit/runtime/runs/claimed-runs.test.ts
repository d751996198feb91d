import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { stampOf } from '../../../../src/clock.js';
import { createModelRouter } from '../../../../src/providers/index.js';
import { createDelivery } from '../../../../src/runtime/delivery/delivery.js';
import { createHeartbeat } from '../../../../src/runtime/heartbeat/heartbeat.js';
import {
  type ClaimState,
  cancelClaimed,
  claim,
  createClaimState,
  stopClaimed,
  takeClaimed,
} from '../../../../src/runtime/runs/claimed-runs.js';
import { renewLeases } from '../../../../src/runtime/runs/run-leases.js';
import type { ClaimedRun, WorkShare } from '../../../../src/store/index.js';
import { createStore, type Store, sqliteBackend, sqliteContract } from '../../../../src/store/sqlite/index.js';
import { createManualClock } from '../../../helpers/clock.js';
import { type FakeModel, startFakeModel } from '../../../helpers/fake-model.js';
import { hookRun } from '../../../helpers/runs.js';
import { workShare } from '../../../helpers/work-share.js';

/**
 * The parts of a node's claimed runs (docs/scale.md), each on its own: a claim, the runs it
 * returned taken, a renewal of their leases, a cancel. The database is a WorkShare the test
 * answers for; the runs are real, against a model that never answers.
 */

const LEASE_MS = 400;

let model: FakeModel | undefined;
let store: Store | undefined;
let claimed: ClaimState | undefined;
afterEach(async () => {
  if (claimed) await stopClaimed(claimed);
  await model?.close();
  store?.close();
});

/** A node's claimed runs over `share`, not started, with room for `maxConcurrent` runs. */
async function node(share: WorkShare, maxConcurrent = 2) {
  model = await startFakeModel(() => ({ stall: true }));
  const models = createModelRouter({ models: { providers: { fake: { baseUrl: model.url, api: 'openai-chat' } } } });
  store = createStore({ path: ':memory:', synchronous: 'normal' });
  const clock = createManualClock();
  const log = pino({ level: 'silent' });
  const contract = sqliteContract(store);
  const delivery = createDelivery({ channels: new Map(), ackMaxChars: 300, meta: sqliteBackend(store).meta, log });
  const heartbeat = createHeartbeat({
    store: contract,
    models,
    delivery,
    model: 'fake/m',
    timeoutSeconds: 30,
    everyMs: 0,
    log,
    clock,
  });
  const q = createClaimState({
    share,
    store: contract,
    models,
    delivery,
    heartbeat,
    maxConcurrent,
    defaultTimeoutSeconds: 30,
    log,
    clock,
  });
  claimed = q;
  return { q, store, clock, model };
}

/** A queued run `id` on its own session, as the store holds it and as a claim returns it. */
function queued(store: Store, id: string): ClaimedRun {
  store.runs.insert(hookRun(id));
  return { id, sessionKey: `hook:${id}`, model: 'fake/m' };
}

describe("a node's claims", () => {
  it('asks one claim at a time, for the room it has, and once more after it when asked meanwhile', async () => {
    const limits: number[] = [];
    let answer: (runs: ClaimedRun[]) => void = () => undefined;
    const share = workShare({
      leaseMs: LEASE_MS,
      claimRuns: (limit) => {
        limits.push(limit);
        return new Promise((resolve) => {
          answer = resolve;
        });
      },
    });
    const { q, store, model } = await node(share, 2);
    claim(q);
    claim(q);
    claim(q);
    expect(limits).toEqual([2]);
    answer([queued(store, 'r1')]);
    // The two calls made meanwhile ask once more; the run taken holds a slot by then.
    await expect.poll(() => limits).toEqual([2, 1]);
    answer([]);
    await q.claiming;
    expect(limits).toEqual([2, 1]);
    await expect.poll(() => model.requests.length).toBe(1);
  });

  it('holds a run for a lease from when its claim was sent, and renews one held again instead of starting it twice', async () => {
    const { q, store, clock, model } = await node(workShare({ leaseMs: LEASE_MS }));
    const run = queued(store, 'r1');
    q.backlog = 3;
    const sentAt = { monotonic: clock.monotonic() - 100, wall: clock.now() - 100 };
    takeClaimed(q, [run], sentAt);
    expect(q.held.get('r1')?.asked).toEqual(sentAt);
    expect(q.backlog).toBe(2);
    await expect.poll(() => model.requests.length).toBe(1);
    takeClaimed(q, [run], stampOf(clock));
    expect(q.held.get('r1')?.asked).toEqual(stampOf(clock));
    expect(q.runs.waiting + q.runs.executing).toBe(1);
    expect(q.backlog).toBe(1);
  });

  it('ends a claimed run the operator asked to cancel, never asking the model', async () => {
    const { q, store, clock } = await node(workShare({ leaseMs: LEASE_MS }));
    takeClaimed(q, [{ ...queued(store, 'r1'), cancelRequested: true }], stampOf(clock));
    await expect.poll(() => store?.runs.get('r1')?.status).toBe('cancelled');
    expect(model?.requests).toEqual([]);
  });
});

describe("a renewal of a node's leases", () => {
  it("extends the renewed from when it asked, keeps a busy one's end, gives a lost one up and ends those asked to cancel", async () => {
    const share = workShare({
      leaseMs: LEASE_MS,
      renewRuns: async () => ({
        renewed: new Set(['renewed', 'cancelled']),
        busy: new Set(['busy']),
        cancelled: new Set(['cancelled']),
      }),
    });
    // Five run slots: a provider takes four (one fewer, docs/runtime.md#fault-isolation).
    const { q, store, clock, model } = await node(share, 5);
    const claimedAt = stampOf(clock);
    const ids = ['renewed', 'busy', 'lost', 'cancelled'];
    takeClaimed(
      q,
      ids.map((id) => queued(store, id)),
      claimedAt,
    );
    await expect.poll(() => model.requests.length).toBe(4);
    await clock.advance(50);
    await renewLeases(q);
    expect(q.held.get('renewed')?.asked).toEqual({ monotonic: claimedAt.monotonic + 50, wall: claimedAt.wall + 50 });
    expect(q.held.get('busy')?.asked).toEqual(claimedAt);
    expect(q.held.get('renewed')?.abort.signal.aborted).toBe(false);
    // The lost lease's run stops unfinished, for the node that takes it over.
    await expect.poll(() => q.held.has('lost')).toBe(false);
    expect(store.runs.get('lost')?.summarizedAt).toBeUndefined();
    await expect.poll(() => store?.runs.get('cancelled')?.status).toBe('cancelled');
    expect(store.runs.get('renewed')?.status).toBe('running');
  });
});

describe('a cancel on a node among several', () => {
  it('ends a run held here or by no one, asks the node that holds one, and says when one was over', async () => {
    const share = workShare({ leaseMs: LEASE_MS, takeRun: async (id) => id === 'free' });
    const { q, store, clock } = await node(share);
    takeClaimed(q, [queued(store, 'here')], stampOf(clock));
    for (const id of ['free', 'elsewhere', 'over']) queued(store, id);
    store.runs.markSummarized('over', clock.now());
    expect(await cancelClaimed(q, 'here')).toBe('ended');
    expect(await cancelClaimed(q, 'free')).toBe('ended');
    expect(await cancelClaimed(q, 'elsewhere')).toBe('requested');
    expect(await cancelClaimed(q, 'over')).toBe('finished');
    expect(['here', 'free', 'elsewhere', 'over'].map((id) => store?.runs.get(id)?.status)).toEqual([
      'cancelled',
      'cancelled',
      'queued',
      'queued',
    ]);
    expect(store.runs.get('elsewhere')?.cancelRequestedAt).toBe(clock.now());
  });
});
