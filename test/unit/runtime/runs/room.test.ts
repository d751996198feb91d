import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createModelRouter } from '../../../../src/providers/index.js';
import { createDelivery } from '../../../../src/runtime/delivery/delivery.js';
import { createHeartbeat } from '../../../../src/runtime/heartbeat/heartbeat.js';
import { createClaimedRunQueue } from '../../../../src/runtime/runs/claimed-runs.js';
import type { StoreContract, WorkShare } from '../../../../src/store/index.js';
import { createStore, type Store, sqliteBackend, sqliteContract } from '../../../../src/store/sqlite/index.js';
import { hookRun } from '../../../helpers/runs.js';

/**
 * A node on a shared store claims runs up to the room it has (docs/scale.md). A run whose model
 * answered and whose result is being written takes room: were it not counted, a node would hold
 * runs past its `maxConcurrentRuns` that another node asks the model again when it dies.
 */

let store: Store | undefined;
afterEach(() => store?.close());

function queueRun(s: Store, id: string): void {
  s.runs.insert(hookRun(id, { model: 'builtin/echo' }));
}

describe('the room of a node on a shared store', () => {
  it('counts a run writing its result, so no run is claimed past maxConcurrentRuns meanwhile', async () => {
    const s = createStore({ path: ':memory:', synchronous: 'normal' });
    store = s;
    const waiting = ['r1', 'r2', 'r3'];
    for (const id of waiting) queueRun(s, id);
    const claims: string[][] = [];
    const share: WorkShare = {
      node: 'node-a',
      leaseMs: 60_000,
      async claimRuns(limit) {
        const claimed = waiting.splice(0, limit);
        claims.push(claimed);
        return claimed.map((id) => ({ id, sessionKey: `hook:${id}`, model: 'builtin/echo' }));
      },
      async renewRuns(ids) {
        return { renewed: new Set(ids), busy: new Set(), cancelled: new Set() };
      },
      takeRun: async () => false,
      releaseRuns: async () => {},
      claimableRuns: async () => waiting.length,
      holdJob: async () => true,
      releaseJob: async () => {},
      requestHeartbeat: async () => {},
      listen: async () => async () => {},
    };
    // The second grouped write of a run (its turn, outcome and summary) waits for `release`.
    const base = sqliteContract(s);
    let writes = 0;
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let blocked = false;
    const reads: StoreContract = {
      ...base,
      group: {
        async write(fn, options) {
          if (++writes === 2) {
            blocked = true;
            await released;
          }
          return base.group.write(fn, options);
        },
        flush: base.group.flush,
      },
    };
    const log = pino({ level: 'silent' });
    const models = createModelRouter({ models: { providers: {} } });
    const delivery = createDelivery({ channels: new Map(), ackMaxChars: 300, meta: sqliteBackend(s).meta, log });
    const heartbeat = createHeartbeat({
      store: base,
      models,
      delivery,
      model: 'builtin/echo',
      timeoutSeconds: 5,
      everyMs: 0,
      log,
    });
    const runs = createClaimedRunQueue({
      share,
      store: reads,
      models,
      delivery,
      heartbeat,
      maxConcurrent: 1,
      defaultTimeoutSeconds: 5,
      log,
    });
    await runs.resume();
    await expect.poll(() => blocked).toBe(true);
    // The model answered r1 and gave its slot back (a claim would have been asked then, before
    // the write); r1 still takes the node's only room.
    expect(claims.flat()).toEqual(['r1']);
    release();
    await expect.poll(() => ['r1', 'r2', 'r3'].map((id) => s.runs.get(id)?.status)).toEqual(['ok', 'ok', 'ok']);
    expect(claims.filter((c) => c.length > 0)).toEqual([['r1'], ['r2'], ['r3']]);
    await runs.stop();
  });
});
