import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createModelRouter } from '../../../../src/providers/index.js';
import { createDelivery } from '../../../../src/runtime/delivery/delivery.js';
import { createHeartbeat, type HeartbeatOptions } from '../../../../src/runtime/heartbeat/heartbeat.js';
import type { ModelRouter } from '../../../../src/runtime/index.js';
import { createStore, type Store, sqliteBackend, sqliteContract } from '../../../../src/store/sqlite/index.js';
import { until } from '../../../helpers/clock.js';

/** A heartbeat on the builtin echo model over `contract` (of `store`), with no chat channel. */
function echoHeartbeat(
  store: Store,
  contract: HeartbeatOptions['store'],
  log: HeartbeatOptions['log'],
  extra: Partial<HeartbeatOptions> = {},
) {
  return createHeartbeat({
    store: contract,
    models: createModelRouter({ models: { providers: {} } }),
    delivery: createDelivery({ channels: new Map(), ackMaxChars: 300, meta: sqliteBackend(store).meta, log }),
    model: 'builtin/echo',
    timeoutSeconds: 5,
    everyMs: 0,
    log,
    coalesceMs: 1,
    ...extra,
  });
}

describe('heartbeat turns', () => {
  it('show at most maxEventsPerTurn events, oldest first, and follow up until the backlog is consumed', async () => {
    const store = createStore({ path: ':memory:', synchronous: 'normal' });
    const log = pino({ level: 'silent' });
    for (let n = 1; n <= 5; n++) {
      store.events.insert({
        id: `e${n}`,
        sessionKey: 'main',
        text: `event ${n}`,
        origin: 'system',
        allowUnsafeExternalContent: true,
        contentSource: 'webhook',
        createdAt: n,
      });
    }
    const heartbeat = echoHeartbeat(store, sqliteContract(store), log, { maxEventsPerTurn: 2 });
    heartbeat.request();
    await expect.poll(() => store.events.countPending('main')).toBe(0);
    const turns = store.messages.recent('main', 100).filter((m) => m.role === 'user');
    expect(turns).toHaveLength(3);
    expect(turns[0]?.content).toContain('event 1');
    expect(turns[0]?.content).toContain('event 2');
    expect(turns[0]?.content).not.toContain('event 3');
    expect(turns[2]?.content).toContain('event 5');
    await heartbeat.stop();
    store.close();
  });
});

describe('a heartbeat whose store is out of reach', () => {
  it('says it was interrupted, with the cause and no stack, and leaves its events for the next turn', async () => {
    const store = createStore({ path: ':memory:', synchronous: 'normal' });
    const lines: Record<string, unknown>[] = [];
    const log = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    store.events.insert({
      id: 'e1',
      sessionKey: 'main',
      text: 'waits',
      origin: 'system',
      allowUnsafeExternalContent: true,
      contentSource: 'webhook',
      createdAt: 1,
    });
    const contract = sqliteContract(store);
    let down = true;
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    const events = new Proxy(contract.events, {
      get: (target, key, receiver) => {
        const value = Reflect.get(target, key, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => (down ? Promise.reject(refused) : value.apply(target, args));
      },
    });
    const heartbeat = echoHeartbeat(store, { ...contract, events }, log);
    heartbeat.request();
    await expect
      .poll(
        () => lines.filter((l) => l.msg === 'heartbeat interrupted: the store is out of reach; its events wait').length,
      )
      .toBe(1);
    expect(lines.find((l) => String(l.msg).startsWith('heartbeat interrupted'))).toMatchObject({
      level: 40,
      cause: 'connect ECONNREFUSED 127.0.0.1:5432',
    });
    expect(lines.some((l) => l.msg === 'heartbeat crashed' || 'err' in l)).toBe(false);
    expect(store.events.countPending('main')).toBe(1);
    down = false;
    heartbeat.request();
    await expect.poll(() => store.events.countPending('main')).toBe(0);
    await heartbeat.stop();
    store.close();
  });
});

/** A heartbeat on the builtin echo model, recording the user message of each model call. */
function setup(options: Partial<HeartbeatOptions> = {}) {
  const store = createStore({ path: ':memory:', synchronous: 'normal' });
  const log = pino({ level: 'silent' });
  const echo = createModelRouter({ models: { providers: {} } });
  const calls: string[] = [];
  let gate: Promise<void> | undefined;
  const models: ModelRouter = {
    async complete(ref, request) {
      calls.push(request.messages.at(-1)?.content ?? '');
      await gate;
      return echo.complete(ref, request);
    },
  };
  const heartbeat = createHeartbeat({
    store: sqliteContract(store),
    models,
    delivery: createDelivery({ channels: new Map(), ackMaxChars: 300, meta: sqliteBackend(store).meta, log }),
    model: 'builtin/echo',
    timeoutSeconds: 5,
    everyMs: 0,
    log,
    ...options,
  });
  let n = 0;
  const event = (text: string) =>
    store.events.insert({
      id: `e${++n}`,
      sessionKey: 'main',
      text,
      origin: 'system',
      allowUnsafeExternalContent: true,
      contentSource: 'webhook',
      createdAt: n,
    });
  /** Holds model calls until the returned function is called. */
  const hold = () => {
    let release = () => {};
    gate = new Promise((resolve) => {
      release = resolve;
    });
    return () => {
      gate = undefined;
      release();
    };
  };
  const settled = () => until(() => store.events.countPending('main') === 0);
  return { store, heartbeat, calls, event, hold, settled };
}

describe('heartbeat timing (fake timers)', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('starts one turn 250 ms after a request, for every event requested within that window', async () => {
    const { heartbeat, calls, event, settled } = setup();
    event('disk full');
    heartbeat.request();
    await vi.advanceTimersByTimeAsync(100);
    event('backup done');
    heartbeat.request();
    await vi.advanceTimersByTimeAsync(149);
    expect(calls).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toContain('disk full');
    expect(calls[0]).toContain('backup done');
    await settled();
    event('later');
    heartbeat.request();
    await vi.advanceTimersByTimeAsync(249);
    expect(calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toHaveLength(2);
    await heartbeat.stop();
  });

  it('turns requests made during a turn into one more turn, 250 ms after it ends', async () => {
    const { store, heartbeat, calls, event, hold, settled } = setup();
    const release = hold();
    event('first');
    heartbeat.request();
    await vi.advanceTimersByTimeAsync(250);
    expect(calls).toHaveLength(1);
    for (const text of ['second', 'third']) {
      event(text);
      heartbeat.request();
    }
    await vi.advanceTimersByTimeAsync(1000);
    expect(calls).toHaveLength(1);
    release();
    // The turn consumed 'first' and its time limit's timer is gone; the one timer left is the next turn's.
    await until(() => store.events.countPending('main') === 2 && vi.getTimerCount() === 1);
    await vi.advanceTimersByTimeAsync(249);
    expect(calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toHaveLength(2);
    expect(calls[1]).toContain('second');
    expect(calls[1]).toContain('third');
    await settled();
    await heartbeat.stop();
  });

  it('runs a periodic turn every everyMs while events are pending, and calls no model when none are', async () => {
    const { heartbeat, calls, event, settled } = setup({ everyMs: 60_000 });
    heartbeat.start();
    event('quiet arrival');
    await vi.advanceTimersByTimeAsync(59_999);
    expect(calls).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toContain('quiet arrival');
    await settled();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(calls).toHaveLength(1);
    event('next one');
    await vi.advanceTimersByTimeAsync(60_000);
    expect(calls).toHaveLength(2);
    expect(calls[1]).toContain('next one');
    await settled();
    await heartbeat.stop();
  });

  it('starts with a turn for events a previous process left pending, not at the first tick', async () => {
    const { heartbeat, calls, event, settled } = setup({ everyMs: 3_600_000 });
    event('left over');
    heartbeat.start();
    await vi.advanceTimersByTimeAsync(250);
    expect(calls).toHaveLength(1);
    await settled();
    await heartbeat.stop();
  });

  it('drops a requested turn and the periodic timer when stopped', async () => {
    const { heartbeat, calls, event } = setup({ everyMs: 60_000 });
    event('too late');
    heartbeat.start();
    await heartbeat.stop();
    await vi.advanceTimersByTimeAsync(120_000);
    expect(calls).toHaveLength(0);
    expect(vi.getTimerCount()).toBe(0);
  });
});
