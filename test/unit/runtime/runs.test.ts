import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createModelRouter } from '../../../src/providers/index.js';
import { createDelivery } from '../../../src/runtime/delivery.js';
import { createHeartbeat } from '../../../src/runtime/heartbeat.js';
import { createRunQueue } from '../../../src/runtime/runs.js';
import { createStore, type Store } from '../../../src/store/index.js';

function setup() {
  const base = createStore({ path: ':memory:', synchronous: 'normal' });
  let writes = 0;
  // The same store, counting the writes handed to the group commit.
  const store: Store = {
    ...base,
    group: {
      write(fn) {
        writes++;
        return base.group.write(fn);
      },
    },
  };
  const log = pino({ level: 'silent' });
  const models = createModelRouter({ models: { providers: {} } });
  const delivery = createDelivery({ channels: new Map(), ackMaxChars: 300, meta: store.meta, log });
  const heartbeat = createHeartbeat({
    store,
    models,
    delivery,
    model: 'builtin/echo',
    timeoutSeconds: 5,
    everyMs: 0,
    log,
  });
  const runs = createRunQueue({ store, models, delivery, heartbeat, maxConcurrent: 4, defaultTimeoutSeconds: 5, log });
  const add = (id: string, deliver: boolean) => {
    store.runs.insert({
      id,
      sessionKey: `hook:${id}`,
      message: `hello ${id}`,
      model: 'builtin/echo',
      wakeMode: 'next-heartbeat',
      deliver,
      channel: 'last',
      allowUnsafeExternalContent: false,
      contentSource: 'webhook',
      createdAt: 1,
    });
    runs.enqueue(id, `hook:${id}`);
  };
  return { store, runs, add, writes: () => writes };
}

describe('run queue writes', () => {
  it('writes a run with nothing to deliver in two grouped writes: running, then turn + outcome + summary', async () => {
    const { store, runs, add, writes } = setup();
    add('r1', false);
    await expect.poll(() => store.runs.get('r1')?.delivery).toBeDefined();
    await expect.poll(() => store.events.get('r1:summary')).toBeDefined();
    const run = store.runs.get('r1');
    expect(run?.status).toBe('ok');
    expect(run?.startedAt).toBeTypeOf('number');
    expect(run?.delivery).toEqual({ status: 'skipped', reason: 'deliver is false' });
    expect(store.messages.list('hook:r1').map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(store.runs.unfinished()).toEqual([]);
    expect(writes()).toBe(2);
    await runs.stop();
  });

  it('commits the turn before a delivery, then the outcome with the summary', async () => {
    const { store, runs, add, writes } = setup();
    add('r2', true);
    await expect.poll(() => store.events.get('r2:summary')).toBeDefined();
    // No channel is configured: the delivery fails, and the run's reply is kept.
    expect(store.runs.get('r2')?.delivery?.status).toBe('failed');
    expect(store.runs.get('r2')?.output).toBeTypeOf('string');
    expect(writes()).toBe(3);
    await runs.stop();
  });
});
