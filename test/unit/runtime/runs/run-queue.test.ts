import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../../../src/clock.js';
import { createModelRouter } from '../../../../src/providers/index.js';
import { createDelivery } from '../../../../src/runtime/delivery/delivery.js';
import { createHeartbeat } from '../../../../src/runtime/heartbeat/heartbeat.js';
import type { ModelRouter } from '../../../../src/runtime/index.js';
import { createTrySlots, type TrySlots } from '../../../../src/runtime/isolation/index.js';
import { createRunQueue } from '../../../../src/runtime/runs/run-queue.js';
import { createStore, type Store, sqliteBackend, sqliteContract } from '../../../../src/store/sqlite/index.js';
import { createManualClock, type ManualClock, settle } from '../../../helpers/clock.js';
import { startFakeModel } from '../../../helpers/fake-model.js';
import { hookRun } from '../../../helpers/runs.js';

function setup(
  options: {
    models?: ModelRouter;
    spacingMs?: () => number;
    logs?: string[];
    maxConcurrent?: number;
    clock?: ManualClock;
    slots?: TrySlots;
    /** A read of run `id` that fails (a disk error) when this answers true, or with the error it answers. */
    readFails?: (id: string) => boolean | Error;
  } = {},
) {
  const base = createStore({ path: ':memory:', synchronous: 'normal' });
  let writes = 0;
  // The same store, counting the writes handed to the group commit.
  const store: Store = {
    ...base,
    runs: {
      ...base.runs,
      get: (id) => {
        const fails = options.readFails?.(id);
        if (fails instanceof Error) throw fails;
        if (fails) throw new Error('SQLITE_IOERR: disk I/O error');
        return base.runs.get(id);
      },
    },
    group: {
      write(fn, options) {
        writes++;
        return base.group.write(fn, options);
      },
      flush: base.group.flush,
    },
  };
  const log = options.logs
    ? pino({ level: 'info' }, { write: (line: string) => options.logs?.push(line) })
    : pino({ level: 'silent' });
  const models = options.models ?? createModelRouter({ models: { providers: {} } });
  const delivery = createDelivery({ channels: new Map(), ackMaxChars: 300, meta: sqliteBackend(store).meta, log });
  const heartbeat = createHeartbeat({
    store: sqliteContract(store),
    models,
    delivery,
    model: 'builtin/echo',
    timeoutSeconds: 5,
    everyMs: 0,
    log,
  });
  const runs = createRunQueue({
    store: sqliteContract(store),
    models,
    delivery,
    heartbeat,
    maxConcurrent: options.maxConcurrent ?? 4,
    defaultTimeoutSeconds: 5,
    log,
    ...(options.spacingMs ? { spacingMs: options.spacingMs } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.slots ? { slots: options.slots } : {}),
  });
  /** A run of `sessionKey` to `model`, from `mappingId`. */
  const addOf = (id: string, sessionKey: string, model: string, mappingId: string, message: string) => {
    store.runs.insert({
      ...{ id, sessionKey, message, model, mappingId, wakeMode: 'next-heartbeat', deliver: false },
      ...{ channel: 'last', allowUnsafeExternalContent: false, contentSource: 'webhook', createdAt: 1 },
    });
    runs.enqueue({ id, sessionKey, model, mappingId });
  };
  const add = (id: string, deliver: boolean, message = `hello ${id}`) => {
    store.runs.insert({
      id,
      sessionKey: `hook:${id}`,
      message,
      model: 'builtin/echo',
      wakeMode: 'next-heartbeat',
      deliver,
      channel: 'last',
      allowUnsafeExternalContent: false,
      contentSource: 'webhook',
      createdAt: 1,
    });
    runs.enqueue({ id, sessionKey: `hook:${id}`, model: 'builtin/echo' });
  };
  return { store, runs, add, addOf, writes: () => writes };
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
    expect(store.messages.recent('hook:r1', 100).map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(store.runs.unfinished()).toEqual([]);
    expect(writes()).toBe(2);
    await runs.stop();
  });

  it('commits the turn before a delivery, then the outcome with the summary', async () => {
    const { store, runs, add, writes } = setup();
    add('r2', true);
    await expect.poll(() => store.events.get('r2:summary')).toBeDefined();
    // No channel is configured: the delivery is skipped (it was once counted failed), and the run's reply is kept.
    expect(store.runs.get('r2')?.delivery).toEqual({
      status: 'skipped',
      reason: 'no channel: none is configured (channels)',
    });
    expect(store.runs.get('r2')?.output).toBeTypeOf('string');
    expect(writes()).toBe(3);
    await runs.stop();
  });
});

describe('run queue concurrency', () => {
  it('starts runs no closer together than the spacing, and at once again when it drops to 0', async () => {
    const clock = createManualClock();
    const started: { id: string; at: number }[] = [];
    const models: ModelRouter = {
      complete: async (_ref, request) => {
        const id = /hello (\w)/.exec(request.messages.at(-1)?.content ?? '')?.[1] ?? '?';
        started.push({ id, at: clock.now() });
        return `done ${id}`;
      },
    };
    let spacing = 150;
    const { store, runs, add } = setup({ models, maxConcurrent: 1, spacingMs: () => spacing, clock });
    for (const id of ['a', 'b', 'c']) add(id, false);
    await expect.poll(() => started.length).toBe(1);
    // Each next start waits for the clock: nothing but the spacing timer moves it.
    for (let n = 2; n <= 3; n++) {
      await expect.poll(() => clock.pending).toBeGreaterThan(0);
      await clock.advance(spacing);
      await expect.poll(() => started.length).toBe(n);
    }
    expect(started.map((s) => s.id)).toEqual(['a', 'b', 'c']);
    for (let i = 1; i < started.length; i++) {
      expect((started[i]?.at ?? 0) - (started[i - 1]?.at ?? 0)).toBeGreaterThanOrEqual(spacing);
    }
    // Pressure gone: the next runs start as soon as one ends, with no timer between them.
    spacing = 0;
    const before = clock.now();
    for (const id of ['d', 'e', 'f']) add(id, false);
    await expect.poll(() => started.length).toBe(6);
    expect(started.slice(3).map((s) => s.at)).toEqual([before, before, before]);
    await expect.poll(() => store.runs.unfinished().length).toBe(0);
    await runs.stop();
  });

  it('stops its spacing timer with the queue: a run waiting for it never starts', async () => {
    const clock = createManualClock();
    const started: string[] = [];
    const models: ModelRouter = {
      complete: async (_ref, request) => {
        started.push(/hello (\w)/.exec(request.messages.at(-1)?.content ?? '')?.[1] ?? '?');
        return 'done';
      },
    };
    const { store, runs, add } = setup({ models, maxConcurrent: 1, spacingMs: () => 200, clock });
    add('a', false);
    add('b', false);
    await expect.poll(() => store.runs.get('a')?.status).toBe('ok');
    await expect.poll(() => clock.pending).toBe(1);
    await runs.stop();
    // The timer that would have started b is gone with the queue, however far time moves.
    expect(clock.pending).toBe(0);
    await clock.advance(1000);
    expect(started).toEqual(['a']);
    expect(store.runs.get('b')?.status).toBe('queued');
  });

  it('runs 16 at once without a MaxListenersExceededWarning on the shared shutdown signal', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on('warning', onWarning);
    try {
      const releases: (() => void)[] = [];
      const models: ModelRouter = {
        complete: () => new Promise<string>((resolve) => releases.push(() => resolve('done'))),
      };
      // 17 slots: a provider takes one fewer (docs/runtime.md#fault-isolation).
      const { store, runs, add } = setup({ models, maxConcurrent: 17 });
      for (let i = 0; i < 16; i++) add(`r${i}`, false);
      await expect.poll(() => releases.length).toBe(16);
      for (const release of releases) release();
      await expect.poll(() => store.runs.unfinished().length).toBe(0);
      await runs.stop();
      // Node emits process warnings on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });
});

describe('a run whose store write fails', () => {
  it('is retried without a restart once the disk has room again, and asks the model once', async () => {
    const logs: string[] = [];
    let modelCalls = 0;
    const models: ModelRouter = {
      complete: async (_ref, request) => {
        modelCalls++;
        return `echo ${request.messages.at(-1)?.content.length}`;
      },
    };
    const { store, runs, add } = setup({ models, logs });
    // A real SQLITE_FULL: once the run is in, the database may not grow past the pages it has,
    // and the run's transcript (its 64 KB message again) needs more.
    add('full', false, 'x'.repeat(64 * 1024));
    store.db.pragma(`max_page_count = ${store.db.pragma('page_count', { simple: true }) as number}`);
    await expect.poll(() => logs.filter((l) => l.includes('run write failed; retrying')).length).toBeGreaterThan(0);
    expect(logs.find((l) => l.includes('run write failed'))).toMatch(/SQLITE_FULL|full/);
    expect(store.runs.unfinished().map((r) => r.id)).toEqual(['full']);
    store.db.pragma('max_page_count = 1073741823');
    await expect.poll(() => store.runs.get('full')?.status, { timeout: 5000 }).toBe('ok');
    await expect.poll(() => store.events.get('full:summary')).toBeDefined();
    expect(store.runs.unfinished()).toEqual([]);
    expect(modelCalls).toBe(1);
    expect(logs.some((l) => l.includes('run write committed after retries'))).toBe(true);
    await runs.stop();
  });

  it('stops retrying at shutdown, leaving the run to resume at the next start', async () => {
    const logs: string[] = [];
    const { store, runs, add } = setup({ logs });
    add('stuck', false, 'y'.repeat(64 * 1024));
    store.db.pragma(`max_page_count = ${store.db.pragma('page_count', { simple: true }) as number}`);
    await expect.poll(() => logs.some((l) => l.includes('run write failed; retrying'))).toBe(true);
    await runs.stop();
    expect(store.runs.unfinished().map((r) => r.id)).toEqual(['stuck']);
    expect(logs.some((l) => l.includes('run crashed'))).toBe(false);
  });
});

describe('runs of one session', () => {
  it('run in arrival order when the first waits for its model and the second, from another mapping, could go', async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const asked: string[] = [];
    const models: ModelRouter = {
      complete: async (_ref, request) => {
        const text = String(request.messages.at(-1)?.content);
        const which = ['hold', 'first', 'second', 'third'].find((word) => text.includes(word)) ?? '?';
        asked.push(which);
        if (which === 'hold') await held;
        return `done ${which}`;
      },
    };
    // The provider `slow` takes one call at a time; the run slots have room for more.
    const slots = createTrySlots({
      runSlots: 4,
      limits: { provider: (name) => (name === 'slow' ? 1 : 4), channel: () => 4 },
      clock: systemClock,
    });
    const { store, runs, addOf } = setup({ models, slots });
    addOf('h', 'hook:h', 'slow/x', 'm0', 'hold');
    await expect.poll(() => asked).toEqual(['hold']);
    // One session from two mappings and two models: `a` waits for `slow`, `b` could go at once.
    addOf('a', 'github:pr-1', 'slow/x', 'm1', 'first');
    addOf('b', 'github:pr-1', 'builtin/echo', 'm2', 'second');
    // And a run naming a key hookd made, while that key's own run waits.
    addOf('x', 'hook:x', 'slow/x', 'm1', 'x');
    addOf('c', 'hook:x', 'builtin/echo', 'm2', 'third');
    await settle(20);
    expect(asked).toEqual(['hold']);
    expect(store.runs.get('b')?.status).toBe('queued');
    expect(store.runs.get('c')?.status).toBe('queued');
    release();
    await expect
      .poll(() => ['a', 'b', 'x', 'c'].map((id) => store.runs.get(id)?.status))
      .toEqual(['ok', 'ok', 'ok', 'ok']);
    expect(asked.indexOf('first')).toBeLessThan(asked.indexOf('second'));
    expect(asked.indexOf('?')).toBeLessThan(asked.indexOf('third'));
    await runs.stop();
  });
});

describe('a run that crashes', () => {
  it('is tried again after 1 s, then 2 s, without a restart, and runs once its read works', async () => {
    const logs: string[] = [];
    const clock = createManualClock();
    let reads = 0;
    // Its first two reads fail.
    const { store, runs, add } = setup({ logs, clock, readFails: (id) => id === 'r1' && ++reads <= 2 });
    add('r1', false);
    await expect.poll(() => logs.filter((l) => l.includes('run crashed')).length).toBe(1);
    expect(runs.depth).toBe(0);
    await clock.advance(999);
    await settle();
    expect(logs.filter((l) => l.includes('run crashed')).length).toBe(1);
    await clock.advance(1);
    await expect.poll(() => logs.filter((l) => l.includes('run crashed')).length).toBe(2);
    await clock.advance(1999);
    await settle();
    expect(store.runs.get('r1')?.status).toBe('queued');
    await clock.advance(1);
    await expect.poll(() => store.runs.get('r1')?.status).toBe('ok');
    await expect.poll(() => store.events.get('r1:summary')).toBeDefined();
    expect(logs.filter((l) => l.includes('run crashed')).length).toBe(2);
    await runs.stop();
  });

  it('for want of its store (a database out of reach) is said to be interrupted, without a stack, and runs once it is back', async () => {
    const logs: string[] = [];
    const clock = createManualClock();
    let reads = 0;
    const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    const { store, runs, add } = setup({
      logs,
      clock,
      readFails: (id) => (id === 'r9' && ++reads <= 1 ? refused() : false),
    });
    add('r9', false);
    await expect.poll(() => logs.filter((l) => l.includes('run interrupted')).length).toBe(1);
    const line = JSON.parse(logs.find((l) => l.includes('run interrupted')) as string);
    expect(line).toMatchObject({ level: 40, cause: 'connect ECONNREFUSED 127.0.0.1:5432', runId: 'r9' });
    expect(line.err).toBeUndefined();
    await clock.advance(1000);
    await expect.poll(() => store.runs.get('r9')?.status).toBe('ok');
    expect(logs.filter((l) => l.includes('run crashed'))).toEqual([]);
    await runs.stop();
  });

  it('waiting to be tried again, is not tried after the queue stops, nor once it was cancelled', async () => {
    const clock = createManualClock();
    let cancelled = false;
    const { store, runs, add } = setup({ clock, readFails: (id) => (id === 'r2' && !cancelled) || id === 'r4' });
    add('r2', false);
    await expect.poll(() => runs.depth).toBe(0);
    await settle();
    // Cancelled while it waits: the store ends it; its next try finds it over and does nothing.
    cancelled = true;
    expect(await runs.cancel('r2')).toBe('ended');
    expect(store.runs.get('r2')?.status).toBe('cancelled');
    await clock.advance(1000);
    await settle();
    expect(store.runs.get('r2')?.status).toBe('cancelled');
    expect(store.messages.recent('hook:r2', 100)).toEqual([]);
    // Stopped while one waits: its timer goes with the queue.
    cancelled = false;
    add('r4', false);
    await clock.advance(0);
    await expect.poll(() => runs.depth).toBe(0);
    await runs.stop();
    await clock.advance(300_000);
    await settle();
    expect(store.runs.unfinished().map((r) => [r.id, r.status])).toEqual([['r4', 'queued']]);
  });
});

describe('a queued run whose cancel fails in the store', () => {
  it('is not dropped: the cancel answers its error, and the run is tried again after 1 s', async () => {
    const clock = createManualClock();
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const models: ModelRouter = {
      complete: async (_ref, request) => {
        if (String(request.messages.at(-1)?.content).includes('first')) await held;
        return 'done';
      },
    };
    let failing = false;
    const { store, runs, add } = setup({ clock, models, maxConcurrent: 1, readFails: (id) => id === 'b' && failing });
    add('a', false, 'first');
    add('b', false, 'second');
    await expect.poll(() => store.runs.get('a')?.status).toBe('running');
    expect(store.runs.get('b')?.status).toBe('queued');
    failing = true;
    await expect(runs.cancel('b')).rejects.toThrow('disk I/O error');
    failing = false;
    release();
    await expect.poll(() => store.runs.get('a')?.status).toBe('ok');
    await clock.advance(1000);
    await expect.poll(() => store.runs.get('b')?.status).toBe('ok');
    await runs.stop();
  });
});

describe('a run whose model server keeps failing', () => {
  it("ends timeout with the server's last status and body and the tries made, not only the time", async () => {
    const server = await startFakeModel(() => ({ status: 500, body: { error: { message: 'overloaded' } } }));
    try {
      const models = createModelRouter({
        models: { providers: { fake: { baseUrl: server.url, api: 'openai-chat', apiKey: 'sk-secret-1' } } },
      });
      const { store, runs } = setup({ models });
      // 3 s: a loaded machine once left the first answer of a 1 s run unread (its only try then
      // reads as unanswered, which it was).
      store.runs.insert(hookRun('busy', { timeoutSeconds: 3 }));
      runs.enqueue({ id: 'busy', sessionKey: 'hook:busy', model: 'fake/m' });
      await expect.poll(() => store.runs.get('busy')?.status, { timeout: 15_000 }).toBe('timeout');
      expect(store.runs.get('busy')?.error).toMatch(
        /^timed out after 3s \(the model server failed \d+ times?, last: HTTP 500 \{"error":\{"message":"overloaded"\}\}\)$/,
      );
      await runs.stop();
    } finally {
      await server.close();
    }
  });
});
