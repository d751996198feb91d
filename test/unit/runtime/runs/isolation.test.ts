import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { hookdError } from '../../../../src/errors.js';
import { createDelivery } from '../../../../src/runtime/delivery/delivery.js';
import { createHeartbeat } from '../../../../src/runtime/heartbeat/heartbeat.js';
import type { ModelRouter } from '../../../../src/runtime/index.js';
import { createTrySlots, type TrySlots } from '../../../../src/runtime/isolation/index.js';
import { createRunQueue } from '../../../../src/runtime/runs/run-queue.js';
import type { RunQueue } from '../../../../src/runtime/runs/types.js';
import { createStore, type Store, sqliteBackend, sqliteContract } from '../../../../src/store/sqlite/index.js';
import { createManualClock, type ManualClock, until } from '../../../helpers/clock.js';

/**
 * Fault isolation of agent runs (docs/runtime.md#fault-isolation) on a manual clock: slots held
 * only by tries in flight, breakers, fairness across mappings, and cancel.
 */

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

/** A model server as the runtime sees it: `dead/*` refuses connections, others answer when released. */
function models() {
  const calls: { ref: string; message: string; signal: AbortSignal; answer: (text: string) => void }[] = [];
  const router: ModelRouter = {
    complete(ref, request) {
      const message = request.messages.at(-1)?.content ?? '';
      if (ref.startsWith('dead/'))
        return Promise.reject(hookdError('MODEL_UNREACHABLE', { reason: 'connect ECONNREFUSED 127.0.0.1:9' }));
      return new Promise<string>((resolve, reject) => {
        calls.push({ ref, message, signal: request.signal, answer: resolve });
        request.signal.addEventListener('abort', () => reject(request.signal.reason), { once: true });
      });
    },
  };
  /** Answers the call whose message holds `text`. */
  const answer = async (text: string) => {
    await until(() => calls.some((c) => c.message.includes(text)));
    calls.find((c) => c.message.includes(text))?.answer(`reply to ${text}`);
  };
  return { router, calls, answer };
}

interface World {
  readonly store: Store;
  readonly runs: RunQueue;
  readonly slots: TrySlots;
  readonly clock: ManualClock;
  readonly breakers: string[];
  add(id: string, options?: { mapping?: string; model?: string; timeoutSeconds?: number; session?: string }): void;
  status(id: string): string | undefined;
}

function world(router: ModelRouter, runSlots = 4): World {
  const store = createStore({ path: ':memory:', synchronous: 'normal' });
  const log = pino({ level: 'silent' });
  const clock = createManualClock();
  const breakers: string[] = [];
  const slots = createTrySlots({
    runSlots,
    limits: { provider: () => runSlots, channel: () => 4 },
    clock,
    onBreaker: (b) => breakers.push(`${b.target} ${b.state}`),
  });
  const delivery = createDelivery({ channels: new Map(), ackMaxChars: 300, meta: sqliteBackend(store).meta, log });
  const contract = sqliteContract(store);
  const heartbeat = createHeartbeat({
    store: contract,
    models: router,
    delivery,
    model: 'live/x',
    timeoutSeconds: 5,
    everyMs: 0,
    log,
  });
  const runs = createRunQueue({
    store: contract,
    models: router,
    delivery,
    heartbeat,
    maxConcurrent: runSlots,
    slots,
    defaultTimeoutSeconds: 600,
    log,
    clock,
  });
  stops.push(async () => {
    await runs.stop();
    slots.stop();
  });
  return {
    store,
    runs,
    slots,
    clock,
    breakers,
    add(id, options = {}) {
      const model = options.model ?? 'live/x';
      const sessionKey = options.session ?? `hook:${id}`;
      store.runs.insert({
        id,
        name: id,
        sessionKey,
        message: `hello ${id}`,
        model,
        wakeMode: 'next-heartbeat',
        deliver: false,
        channel: 'last',
        allowUnsafeExternalContent: false,
        contentSource: 'webhook',
        createdAt: clock.now(),
        ...(options.timeoutSeconds ? { timeoutSeconds: options.timeoutSeconds } : {}),
        ...(options.mapping ? { mappingId: options.mapping } : {}),
      });
      runs.enqueue({ id, sessionKey, model, ...(options.mapping ? { mappingId: options.mapping } : {}) });
    },
    status: (id) => store.runs.get(id)?.status,
  };
}

describe('runs and their slots (docs/runtime.md#fault-isolation)', () => {
  it("holds no slot while a run waits: a dead model's runs leave the only slot to a healthy one", async () => {
    const model = models();
    const w = world(model.router, 1);
    for (let i = 0; i < 3; i++) w.add(`dead${i}`, { mapping: 'a', model: 'dead/x' });
    // Their first tries fail at once; each then waits out its back-off without the slot.
    await until(() => w.store.runs.attempts(['dead0', 'dead1', 'dead2']).length === 3);
    w.add('live', { mapping: 'b' });
    await model.answer('hello live');
    await until(() => w.status('live') === 'ok');
    expect(w.status('dead0')).toBe('running');
  });

  it("opens a model's breaker after 5 failed tries: its runs wait without slots, saying why, until a probe goes through", async () => {
    const model = models();
    const w = world(model.router, 4);
    for (let i = 0; i < 3; i++) w.add(`dead${i}`, { mapping: 'a', model: 'dead/x' });
    // 3 first tries, then 2 more after the 250 ms back-off: 5 failures in a row.
    await until(() => w.store.runs.attempts(['dead0', 'dead1', 'dead2']).length === 3);
    await w.clock.advance(250);
    await until(() => w.breakers.length === 1);
    expect(w.breakers).toEqual(['dead/x open']);
    const until30 = new Date(w.clock.now() + 30_000).toISOString();
    // The runs wait for the breaker, holding nothing: four runs of a healthy model take every slot.
    await w.clock.advance(5_000);
    for (let i = 0; i < 4; i++) w.add(`live${i}`, { mapping: 'b' });
    await until(() => model.calls.length === 4);
    const reason = `breaker open for dead/x until ${until30}`;
    await until(() => w.runs.waitOf('dead0') === reason);
    // Started runs store the wait, for every node to show; a new run of the dead model waits unstarted.
    await until(() => w.store.runs.get('dead0')?.waiting === reason);
    expect(w.store.runs.get('dead0')?.notBefore).toBe(Date.parse(until30));
    w.add('dead3', { mapping: 'a', model: 'dead/x' });
    expect(w.runs.waitOf('dead3')).toBe(reason);
    expect(w.status('dead3')).toBe('queued');
    for (let i = 0; i < 4; i++) await model.answer(`hello live${i}`);
    await until(() => w.status('live3') === 'ok');
    expect(w.store.runs.attempts(['dead0', 'dead1', 'dead2', 'dead3'])).toHaveLength(5);
  });

  it('ends a started run that waits on a breaker past its time limit as timeout, naming the breaker', async () => {
    const model = models();
    const w = world(model.router, 4);
    for (let i = 0; i < 5; i++) w.add(`dead${i}`, { mapping: 'a', model: 'dead/x', timeoutSeconds: 20 });
    await until(() => w.breakers.length === 1);
    await w.clock.advance(20_000);
    await until(() => w.status('dead0') === 'timeout');
    expect(w.store.runs.get('dead0')?.error).toMatch(
      /^timed out after 20s \(the model server failed 1 time, last: connect ECONNREFUSED 127\.0\.0\.1:9; breaker open for dead\/x until \S+Z\)$/,
    );
  });

  it('takes the runs of another mapping before the rest of a burst (docs/runtime.md#fairness)', async () => {
    const model = models();
    const w = world(model.router, 1);
    for (let i = 0; i < 20; i++) w.add(`a${i}`, { mapping: 'a' });
    w.add('b0', { mapping: 'b' });
    await until(() => model.calls.length === 1);
    await model.answer('hello a0');
    await until(() => model.calls.length === 2);
    expect(model.calls[1]?.message).toContain('hello b0');
    expect(w.runs.waitOf('a5')).toBe('waiting for a run slot (1 of 1 in use)');
  });
});

describe('cancel (docs/runtime.md#cancel)', () => {
  it('ends a queued run as cancelled with its summary, never asking the model', async () => {
    const model = models();
    const w = world(model.router, 1);
    w.add('first');
    w.add('second');
    await until(() => model.calls.length === 1);
    expect(await w.runs.cancel('second')).toBe('ended');
    expect(w.store.runs.get('second')).toMatchObject({
      status: 'cancelled',
      error: 'cancelled by the operator',
      delivery: { status: 'skipped', reason: 'cancelled' },
    });
    expect(w.store.events.get('second:summary')?.text).toBe('Hook second (cancelled)');
    await model.answer('hello first');
    await until(() => w.status('first') === 'ok');
    expect(model.calls.map((c) => c.message.includes('second'))).toEqual([false]);
  });

  it('aborts the model call of a running run, and resolves once it ended', async () => {
    const model = models();
    const w = world(model.router, 1);
    w.add('slow');
    await until(() => model.calls.length === 1);
    expect(await w.runs.cancel('slow')).toBe('ended');
    expect(model.calls[0]?.signal.aborted).toBe(true);
    expect(w.store.runs.get('slow')?.status).toBe('cancelled');
    expect(w.store.runs.get('slow')?.output).toBeUndefined();
    expect(w.store.events.get('slow:summary')?.text).toBe('Hook slow (cancelled)');
    expect(w.store.messages.recent('hook:slow', 100)).toEqual([]);
    // The slot it held is free: the next run starts.
    w.add('next');
    await until(() => model.calls.length === 2);
  });

  it('cancels a run waiting on an open breaker, and answers finished for a run that is over', async () => {
    const model = models();
    const w = world(model.router, 4);
    for (let i = 0; i < 5; i++) w.add(`dead${i}`, { mapping: 'a', model: 'dead/x' });
    await until(() => w.breakers.length === 1);
    await w.clock.advance(1_000);
    await until(() => w.runs.waitOf('dead0')?.startsWith('breaker open') === true);
    expect(await w.runs.cancel('dead0')).toBe('ended');
    expect(w.status('dead0')).toBe('cancelled');
    expect(await w.runs.cancel('dead0')).toBe('finished');
  });
});
