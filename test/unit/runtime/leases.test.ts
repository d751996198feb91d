import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createModelRouter } from '../../../src/providers/index.js';
import { createDelivery } from '../../../src/runtime/delivery/delivery.js';
import { createHeartbeat } from '../../../src/runtime/heartbeat/heartbeat.js';
import { createOwnedHeartbeat } from '../../../src/runtime/heartbeat/heartbeat-owner.js';
import { createJobOwner } from '../../../src/runtime/job-owner.js';
import { createClaimedRunQueue } from '../../../src/runtime/runs/claimed-runs.js';
import type { WorkShare } from '../../../src/store/index.js';
import { createStore, type Store, sqliteBackend, sqliteContract } from '../../../src/store/sqlite/index.js';
import { type FakeModel, isHeartbeat, startFakeModel } from '../../helpers/fake-model.js';

/**
 * A node that cannot renew its leases gives its work up before the leases end (docs/scale.md), so
 * that the node taking a run or the heartbeat over never runs it at the same time. The other
 * nodes are played by a WorkShare whose renewals this test refuses.
 */

const LEASE_MS = 400;

/** A WorkShare over one node's view: runs to claim, and renewals that succeed while `renewing`. */
function fakeShare(runIds: string[]) {
  const state = { renewing: true, holdsJob: true, releasedJob: 0, renewed: [] as string[] };
  const share: WorkShare = {
    node: 'node-a',
    leaseMs: LEASE_MS,
    async claimRuns(limit) {
      return runIds.splice(0, limit).map((id) => ({ id, sessionKey: `hook:${id}` }));
    },
    async renewRuns(ids) {
      if (state.renewing) state.renewed.push(...ids);
      return state.renewing ? new Set(ids) : new Set();
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

function parts(models: ReturnType<typeof createModelRouter>) {
  store = createStore({ path: ':memory:', synchronous: 'normal' });
  const log = pino({ level: 'silent' });
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
    });
  /** This node's claimed runs over `share`, reading through `reads` (the store's contract by default). */
  const claimedRuns = (share: WorkShare, reads = sqliteContract(store as Store)) =>
    createClaimedRunQueue({
      share,
      store: reads,
      models,
      delivery,
      heartbeat: heartbeat(),
      maxConcurrent: 2,
      defaultTimeoutSeconds: 30,
      log,
    });
  return { store, log, heartbeat, claimedRuns };
}

/** A queued run `id` on its own session, not delivered. */
function queueRun(store: Store, id: string): void {
  store.runs.insert({
    id,
    sessionKey: `hook:${id}`,
    message: 'hello',
    model: 'fake/m',
    wakeMode: 'next-heartbeat',
    deliver: false,
    channel: 'last',
    allowUnsafeExternalContent: false,
    contentSource: 'webhook',
    createdAt: 1,
  });
}

describe('leases lost by a node', () => {
  it('abort a run in flight before the lease ends, and keep it unfinished for another node', async () => {
    model = await startFakeModel(() => ({ stall: true }));
    const models = createModelRouter({ models: { providers: { fake: { baseUrl: model.url, api: 'openai-chat' } } } });
    const { store, claimedRuns } = parts(models);
    queueRun(store, 'r1');
    const { share, state } = fakeShare(['r1']);
    const runs = claimedRuns(share);
    expect(await runs.resume()).toBe(1);
    await expect.poll(() => model?.requests.length).toBe(1);
    // Renewed while the database answers: the run keeps going past its first lease.
    await new Promise((resolve) => setTimeout(resolve, LEASE_MS * 1.5));
    expect(runs.depth).toBe(1);
    const refusedAt = Date.now();
    state.renewing = false;
    await expect.poll(() => runs.depth, { timeout: LEASE_MS * 4, interval: 10 }).toBe(0);
    // Given up within one lease of the last renewal, before the lease could lapse.
    expect(Date.now() - refusedAt).toBeLessThan(LEASE_MS);
    expect(store.runs.unfinished().map((r) => r.id)).toEqual(['r1']);
    expect(store.events.countPending('main')).toBe(0);
    await runs.stop();
  });

  it('never start a second copy of a run claimed again while its given-up execution winds down', async () => {
    model = await startFakeModel(() => ({ stall: true }));
    const models = createModelRouter({ models: { providers: { fake: { baseUrl: model.url, api: 'openai-chat' } } } });
    const { store, claimedRuns } = parts(models);
    queueRun(store, 'r2');
    const claimable = ['r2'];
    const { share, state } = fakeShare(claimable);
    // The execution reads its run, and that read hangs until the test lets it go.
    let letGo: () => void = () => undefined;
    const contract = sqliteContract(store);
    const reads = {
      ...contract,
      runs: {
        ...contract.runs,
        get: (id: string) =>
          new Promise<Awaited<ReturnType<typeof contract.runs.get>>>((resolve) => {
            letGo = () => resolve(contract.runs.get(id));
          }),
      },
    };
    const runs = claimedRuns(share, reads);
    expect(await runs.resume()).toBe(1);
    state.renewing = false;
    // Given up, then offered again (its lease lapsed, the database is back) while the first
    // execution still hangs.
    await new Promise((resolve) => setTimeout(resolve, LEASE_MS));
    state.renewing = true;
    claimable.push('r2');
    await new Promise((resolve) => setTimeout(resolve, LEASE_MS / 2));
    letGo();
    await new Promise((resolve) => setTimeout(resolve, LEASE_MS / 4));
    state.renewed.length = 0;
    await new Promise((resolve) => setTimeout(resolve, LEASE_MS));
    // Any execution of r2 now is one whose lease this node renews (another node would take an
    // unrenewed one and run it at the same time).
    if (model.requests.length > 0) expect(state.renewed).toContain('r2');
    await runs.stop();
  });

  it('stop the heartbeat turn in flight when its lease cannot be renewed, and run it again once held', async () => {
    model = await startFakeModel((request) => (isHeartbeat(request) ? { stall: true } : 'ok'));
    const models = createModelRouter({ models: { providers: { fake: { baseUrl: model.url, api: 'openai-chat' } } } });
    const { store, log, heartbeat } = parts(models);
    store.events.insert({
      id: 'e1',
      sessionKey: 'main',
      text: 'disk full',
      origin: 'system',
      allowUnsafeExternalContent: true,
      contentSource: 'webhook',
      createdAt: 1,
    });
    const { share, state } = fakeShare([]);
    const owned = createOwnedHeartbeat({ share, make: heartbeat, log });
    await owned.start();
    expect(owned.owner).toBe(true);
    await expect.poll(() => model?.requests.length).toBe(1);
    const refusedAt = Date.now();
    state.holdsJob = false;
    await expect.poll(() => owned.owner, { timeout: LEASE_MS * 4, interval: 10 }).toBe(false);
    expect(Date.now() - refusedAt).toBeLessThan(LEASE_MS);
    // The event stays pending for the next owner; a request now goes to the other nodes.
    expect(store.events.countPending('main')).toBe(1);
    state.holdsJob = true;
    await expect.poll(() => owned.owner, { timeout: LEASE_MS * 4, interval: 10 }).toBe(true);
    await expect.poll(() => model?.requests.length, { timeout: LEASE_MS * 4 }).toBe(2);
    await owned.stop();
    expect(state.releasedJob).toBe(1);
  });

  it('free a job lease whose renewal was in flight at stop after that renewal, and never start the job', async () => {
    const { share } = fakeShare([]);
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
      make: () => ({
        start: () => events.push('gained'),
        stop: async () => {
          events.push('lost');
        },
      }),
    });
    const starting = owner.start();
    const stopping = owner.stop();
    // The database answers the renewal a little after the node began to stop: it holds the lease.
    await new Promise((resolve) => setTimeout(resolve, 20));
    answer(true);
    await Promise.all([starting, stopping]);
    expect(events).toEqual(['held', 'released']);
    expect(owner.running).toBeUndefined();
  });
});
