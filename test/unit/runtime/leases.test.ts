import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createModelRouter } from '../../../src/providers/index.js';
import { createDelivery } from '../../../src/runtime/delivery/delivery.js';
import { createHeartbeat } from '../../../src/runtime/heartbeat/heartbeat.js';
import { createOwnedHeartbeat } from '../../../src/runtime/heartbeat/heartbeat-owner.js';
import { createJobOwner } from '../../../src/runtime/job-owner.js';
import { createClaimedRunQueue } from '../../../src/runtime/runs/claimed-runs.js';
import { type StoreContract, TICK_FAILURE_LOG_MS, type WorkShare } from '../../../src/store/index.js';
import { createStore, type Store, sqliteBackend, sqliteContract } from '../../../src/store/sqlite/index.js';
import { createManualClock, type ManualClock, settle } from '../../helpers/clock.js';
import { type FakeModel, isHeartbeat, startFakeModel } from '../../helpers/fake-model.js';
import { hookRun } from '../../helpers/runs.js';

/**
 * A node that cannot renew its leases gives its work up before the leases end (docs/scale.md), so
 * that the node taking a run or the heartbeat over never runs it at the same time. The other
 * nodes are played by a WorkShare whose renewals this test refuses; time is a manual clock.
 */

const LEASE_MS = 400;
const TICK_MS = LEASE_MS / 4;

/** A WorkShare over one node's view: runs to claim, and renewals that succeed while `renewing`. */
function fakeShare(runIds: string[], clock: ManualClock) {
  const state = {
    renewing: true,
    /** Renewals find the rows locked by another transaction (this node's own commit). */
    busy: false,
    holdsJob: true,
    releasedJob: 0,
    renewed: [] as string[],
    /** The clock when a renewal last succeeded. */
    lastRenewalAt: Number.NaN,
  };
  const share: WorkShare = {
    node: 'node-a',
    leaseMs: LEASE_MS,
    async claimRuns(limit) {
      return runIds.splice(0, limit).map((id) => ({ id, sessionKey: `hook:${id}` }));
    },
    async renewRuns(ids) {
      const cancelled = new Set<string>();
      if (!state.renewing) return { renewed: new Set(), busy: new Set(), cancelled };
      if (state.busy) return { renewed: new Set(), busy: new Set(ids), cancelled };
      state.renewed.push(...ids);
      state.lastRenewalAt = clock.monotonic();
      return { renewed: new Set(ids), busy: new Set(), cancelled };
    },
    async takeRun() {
      return false;
    },
    async releaseRuns() {},
    async claimableRuns() {
      return runIds.length;
    },
    async holdJob() {
      return state.holdsJob;
    },
    async releaseJob() {
      state.releasedJob++;
    },
    async requestHeartbeat() {},
    async listen() {
      return async () => {};
    },
  };
  return { share, state };
}

let model: FakeModel | undefined;
let store: Store | undefined;
afterEach(async () => {
  await model?.close();
  store?.close();
});

/** A logger whose warn lines this test reads as they are written. */
function capturedLog() {
  const warnings: string[] = [];
  const log = pino({ level: 'warn' }, { write: (line: string) => warnings.push(JSON.parse(line).msg) });
  return { log, warnings };
}

function parts(models: ReturnType<typeof createModelRouter>, clock: ManualClock) {
  store = createStore({ path: ':memory:', synchronous: 'normal' });
  const { log, warnings } = capturedLog();
  const delivery = createDelivery({ channels: new Map(), ackMaxChars: 300, meta: sqliteBackend(store).meta, log });
  const heartbeat = () =>
    createHeartbeat({
      store: sqliteContract(store as Store),
      models,
      delivery,
      model: 'fake/m',
      timeoutSeconds: 30,
      everyMs: 0,
      coalesceMs: 1,
      log,
      clock,
    });
  /** This node's claimed runs over `share`, reading through `reads` (the store's contract by default). */
  const claimedRuns = (share: WorkShare, reads: StoreContract = sqliteContract(store as Store)) =>
    createClaimedRunQueue({
      share,
      store: reads,
      models,
      delivery,
      heartbeat: heartbeat(),
      maxConcurrent: 2,
      defaultTimeoutSeconds: 30,
      log,
      clock,
    });
  return { store, log, warnings, heartbeat, claimedRuns };
}

/** A queued run `id` on its own session, not delivered. */
function queueRun(store: Store, id: string): void {
  store.runs.insert(hookRun(id));
}

/** A node executing run `id` against a model that never answers, its leases renewed while the share says so. */
async function executing(id: string) {
  const clock = createManualClock();
  model = await startFakeModel(() => ({ stall: true }));
  const models = createModelRouter({ models: { providers: { fake: { baseUrl: model.url, api: 'openai-chat' } } } });
  const { store, warnings, claimedRuns } = parts(models, clock);
  queueRun(store, id);
  const { share, state } = fakeShare([id], clock);
  const runs = claimedRuns(share);
  expect(await runs.resume()).toBe(1);
  await expect.poll(() => model?.requests.length).toBe(1);
  return { clock, store, warnings, share, state, runs };
}

const GIVEN_UP = 'the lease of a run could not be renewed in time; leaving it to another node';

/** Moves the clock a little at a time until `done` holds; resolves with the monotonic clock's time then. */
async function advanceUntil(clock: ManualClock, done: () => boolean, limitMs: number): Promise<number> {
  for (let moved = 0; !done(); moved += 10) {
    if (moved > limitMs) throw new Error(`not reached within ${limitMs} ms of clock time`);
    await clock.advance(10);
  }
  return clock.monotonic();
}

describe('leases lost by a node', () => {
  it('abort a run in flight before the lease ends, and keep it unfinished for another node', async () => {
    const { clock, store, warnings, state, runs } = await executing('r1');
    // Renewed while the database answers: the run keeps going past its first lease.
    await clock.advance(LEASE_MS * 1.5);
    expect(state.renewed).toContain('r1');
    expect(runs.depth).toBe(1);
    expect(warnings).not.toContain(GIVEN_UP);
    state.renewing = false;
    const givenUpAt = await advanceUntil(clock, () => warnings.includes(GIVEN_UP), LEASE_MS * 2);
    // Given up a quarter lease before the last renewed lease ends: never after it lapsed.
    expect(givenUpAt).toBeLessThanOrEqual(state.lastRenewalAt + LEASE_MS - TICK_MS);
    await expect.poll(() => runs.depth).toBe(0);
    expect(store.runs.unfinished().map((r) => r.id)).toEqual(['r1']);
    expect(store.events.countPending('main')).toBe(0);
    await runs.stop();
  });

  it("give a run up before its lease ends even when the system's clock is set back meanwhile", async () => {
    const { clock, store, warnings, state, runs } = await executing('r5');
    await clock.advance(LEASE_MS * 1.5);
    expect(state.renewed).toContain('r5');
    // Renewals find the row locked from now on, and NTP sets the clock back a minute: the lease,
    // counted on the database's clock, still ends a lease after the last renewal.
    state.busy = true;
    clock.stepWall(-60_000);
    const givenUpAt = await advanceUntil(clock, () => warnings.includes(GIVEN_UP), LEASE_MS * 2);
    expect(givenUpAt).toBeLessThanOrEqual(state.lastRenewalAt + LEASE_MS - TICK_MS);
    await expect.poll(() => runs.depth).toBe(0);
    expect(store.runs.unfinished().map((r) => r.id)).toEqual(['r5']);
    await runs.stop();
  });

  it('give a run up at its next renewal after the machine was suspended past its lease', async () => {
    const { clock, warnings, state, runs } = await executing('r6');
    await clock.advance(LEASE_MS * 1.5);
    // Suspended for a minute: the monotonic clock and the timers stood still, the wall clock
    // (and the database's) did not. Renewals find the row locked: its lease is not extended.
    state.busy = true;
    clock.stepWall(60_000);
    await clock.advance(TICK_MS);
    expect(warnings).toContain(GIVEN_UP);
    await expect.poll(() => runs.depth).toBe(0);
    await runs.stop();
  });

  it('keep a lease found busy without extending it: kept when the next renewal gets through, given up in time if none does', async () => {
    const { clock, warnings, state, runs } = await executing('r3');
    // One renewal finds the row locked: the run goes on, and the next renewal extends it.
    state.busy = true;
    await clock.advance(TICK_MS);
    state.busy = false;
    await clock.advance(LEASE_MS * 2);
    expect(warnings).not.toContain(GIVEN_UP);
    expect(runs.depth).toBe(1);
    // Busy at every renewal: the lease is never extended, so the run is given up before it ends.
    state.busy = true;
    const busySince = state.lastRenewalAt;
    const givenUpAt = await advanceUntil(clock, () => warnings.includes(GIVEN_UP), LEASE_MS * 2);
    expect(givenUpAt).toBeLessThanOrEqual(busySince + LEASE_MS - TICK_MS);
    await expect.poll(() => runs.depth).toBe(0);
    await runs.stop();
  });

  it('never start a second copy of a run claimed again while its given-up execution winds down', async () => {
    const clock = createManualClock();
    model = await startFakeModel(() => ({ stall: true }));
    const models = createModelRouter({ models: { providers: { fake: { baseUrl: model.url, api: 'openai-chat' } } } });
    const { store, warnings, claimedRuns } = parts(models, clock);
    queueRun(store, 'r2');
    const claimable = ['r2'];
    const { share, state } = fakeShare(claimable, clock);
    // Each execution starts by reading its run; the first read hangs until the test lets it go.
    const contract = sqliteContract(store);
    const reads: string[] = [];
    let letGo: () => void = () => undefined;
    const hanging = sqliteContract(store);
    const readsThrough: StoreContract = {
      ...contract,
      runs: {
        ...contract.runs,
        get: (id: string) => {
          reads.push(id);
          if (reads.length > 1) return hanging.runs.get(id);
          return new Promise((resolve) => {
            letGo = () => resolve(hanging.runs.get(id));
          });
        },
      },
    };
    const runs = claimedRuns(share, readsThrough);
    expect(await runs.resume()).toBe(1);
    expect(reads).toEqual(['r2']);
    state.renewing = false;
    await advanceUntil(clock, () => warnings.includes(GIVEN_UP), LEASE_MS * 2);
    // Its lease lapsed and the database is back: the run is offered to this node again while
    // the given-up execution still hangs. No second execution starts.
    state.renewing = true;
    claimable.push('r2');
    await clock.advance(LEASE_MS);
    expect(claimable).toEqual([]);
    expect(reads).toEqual(['r2']);
    // A given-up run is not renewed: its new lease lapses for a node that runs it.
    expect(state.renewed).not.toContain('r2');
    // The hanging execution ends (aborted before it reached the model); offered once more,
    // the run executes once, and its lease is renewed while it does.
    letGo();
    await expect.poll(() => runs.depth).toBe(0);
    expect(model.requests).toHaveLength(0);
    claimable.push('r2');
    await clock.advance(TICK_MS);
    await expect.poll(() => model?.requests.length).toBe(1);
    expect(reads).toEqual(['r2', 'r2']);
    await clock.advance(TICK_MS);
    expect(state.renewed).toContain('r2');
    await runs.stop();
  });

  it('stop the heartbeat turn in flight when its lease cannot be renewed, and run it again once held', async () => {
    const clock = createManualClock();
    model = await startFakeModel((request) => (isHeartbeat(request) ? { stall: true } : 'ok'));
    const models = createModelRouter({ models: { providers: { fake: { baseUrl: model.url, api: 'openai-chat' } } } });
    const { store, log, heartbeat } = parts(models, clock);
    store.events.insert({
      id: 'e1',
      sessionKey: 'main',
      text: 'disk full',
      origin: 'system',
      allowUnsafeExternalContent: true,
      contentSource: 'webhook',
      createdAt: 1,
    });
    const { share, state } = fakeShare([], clock);
    const owned = createOwnedHeartbeat({ share, make: heartbeat, log, clock });
    await owned.start();
    expect(owned.owner).toBe(true);
    await clock.advance(1);
    await expect.poll(() => model?.requests.length).toBe(1);
    const refusedAt = clock.now();
    state.holdsJob = false;
    const droppedAt = await advanceUntil(clock, () => !owned.owner, LEASE_MS * 2);
    expect(droppedAt - refusedAt).toBeLessThanOrEqual(TICK_MS);
    // The event stays pending for the next owner; a request now goes to the other nodes.
    expect(store.events.countPending('main')).toBe(1);
    state.holdsJob = true;
    await advanceUntil(clock, () => owned.owner, LEASE_MS * 2);
    await clock.advance(1);
    await expect.poll(() => model?.requests.length).toBe(2);
    await owned.stop();
    expect(state.releasedJob).toBe(1);
  });

  it('free a job lease whose renewal was in flight at stop after that renewal, and never start the job', async () => {
    const clock = createManualClock();
    const { share } = fakeShare([], clock);
    const events: string[] = [];
    let answer: (held: boolean) => void = () => undefined;
    const owner = createJobOwner({
      share: {
        ...share,
        holdJob: () =>
          new Promise<boolean>((resolve) => {
            answer = (held) => {
              events.push('held');
              resolve(held);
            };
          }),
        releaseJob: async () => {
          events.push('released');
        },
      },
      name: 'mail',
      log: pino({ level: 'silent' }),
      clock,
      make: () => ({
        start: () => events.push('gained'),
        stop: async () => {
          events.push('lost');
        },
      }),
    });
    const starting = owner.start();
    const stopping = owner.stop();
    // The database answers the renewal after the node began to stop: it holds the lease.
    await settle();
    expect(events).toEqual([]);
    answer(true);
    await Promise.all([starting, stopping]);
    expect(events).toEqual(['held', 'released']);
    expect(owner.running).toBeUndefined();
    expect(clock.pending).toBe(0);
  });

  it('say once a minute what the node cannot do while the store is out of reach, not at every tick', async () => {
    const { clock, warnings, share, runs } = await executing('r1');
    const refused = () =>
      Promise.reject(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }));
    Object.assign(share, { renewRuns: refused, claimRuns: refused, claimableRuns: refused });
    const lines = [
      'renewing run leases failed',
      'claiming runs failed; trying again at the next tick',
      'counting waiting runs failed',
    ];
    const told = () => lines.map((line) => warnings.filter((w) => w === line).length);
    // Every quarter lease the node renews, claims and counts (renewals until the run is given
    // up): the first failures at the next tick, 600 claims and counts by the end of their minute.
    await clock.advance(TICK_FAILURE_LOG_MS);
    expect(told()).toEqual([1, 1, 1]);
    // The run whose lease could not be renewed is given up as before.
    expect(warnings).toContain(GIVEN_UP);
    await clock.advance(TICK_MS);
    expect(told()).toEqual([2, 2, 2]);
    await runs.stop();
  });
});
