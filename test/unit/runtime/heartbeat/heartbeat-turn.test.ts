import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createChannels } from '../../../../src/channels/index.js';
import { loadConfig } from '../../../../src/config/index.js';
import { createModelRouter } from '../../../../src/providers/index.js';
import { createDelivery } from '../../../../src/runtime/delivery/delivery.js';
import { createHeartbeatTurn, eventsWithin } from '../../../../src/runtime/heartbeat/heartbeat-turn.js';
import type { ModelRouter } from '../../../../src/runtime/index.js';
import type { EventRecord } from '../../../../src/store/index.js';
import { createStore, sqliteBackend, sqliteContract } from '../../../../src/store/sqlite/index.js';
import { type FakeModel, startFakeModel } from '../../../helpers/fake-model.js';

const event = (id: string, text: string): EventRecord => ({
  id,
  sessionKey: 'main',
  text,
  origin: 'hook',
  allowUnsafeExternalContent: false,
  contentSource: 'webhook',
  createdAt: 0,
  consumedAt: null,
});

describe('eventsWithin', () => {
  it('takes events oldest first while their text fits', () => {
    const events = [event('a', 'x'.repeat(100)), event('b', 'y'.repeat(100)), event('c', 'z'.repeat(100))];
    expect(eventsWithin(events, 300).map((e) => e.id)).toEqual(['a', 'b']);
  });

  it('cuts an event too big alone, with a note of what was left out', () => {
    const [shown, ...rest] = eventsWithin([event('a', 'x'.repeat(50_000)), event('b', 'y')], 10_000);
    expect(rest).toEqual([]);
    expect(shown?.text.length).toBeLessThanOrEqual(10_000);
    expect(shown?.text).toMatch(/… \[truncated by hookd: \d+ of 50000 characters left out\]$/);
  });
});

/** A heartbeat turn over an in-memory store, asking `models` for `fake/m` (or builtin/echo). */
function turnOver(models: ModelRouter, options: { maxPromptChars: number; model?: string; logs?: string[] }) {
  const store = createStore({ path: ':memory:', synchronous: 'normal' });
  const log = options.logs
    ? pino({ level: 'warn' }, { write: (line: string) => options.logs?.push(JSON.parse(line).msg) })
    : pino({ level: 'silent' });
  const turn = createHeartbeatTurn({
    store: sqliteContract(store),
    models,
    delivery: createDelivery({ channels: new Map(), ackMaxChars: 300, meta: sqliteBackend(store).meta, log }),
    model: options.model ?? 'fake/m',
    timeoutSeconds: 5,
    log,
    maxPromptChars: options.maxPromptChars,
  });
  const add = (id: string, text: string) => store.events.insert({ ...event(id, text), createdAt: 1 });
  return { store, turn, add };
}

const sizeOf = (request: { messages: readonly { content: string }[] }) =>
  request.messages.reduce((n, m) => n + m.content.length, 0);

let model: FakeModel | undefined;
afterEach(async () => {
  await model?.close();
  model = undefined;
});

describe('a heartbeat turn', () => {
  it('keeps its whole request, history included, within maxPromptChars while three 250,000-character events pass', async () => {
    const echo = createModelRouter({ models: { providers: {} } });
    const sizes: number[] = [];
    const histories: number[] = [];
    const models: ModelRouter = {
      complete(ref, request) {
        sizes.push(sizeOf(request));
        histories.push(request.messages.length - 1);
        return echo.complete(ref, request);
      },
    };
    const { store, turn, add } = turnOver(models, { maxPromptChars: 200_000, model: 'builtin/echo' });
    store.transaction(() => {
      for (const id of ['e1', 'e2', 'e3']) add(id, 'w'.repeat(250_000));
    });
    const signal = new AbortController().signal;
    const more: boolean[] = [];
    while (store.events.countPending('main') > 0 && more.length < 5) more.push(await turn('request', signal));
    expect(more).toEqual([true, true, false]);
    // Before, history came back whole: 200 k, 400 k, then 600 k characters.
    for (const size of sizes) expect(size).toBeLessThanOrEqual(200_000);
    expect(sizes).toHaveLength(3);
    // The events filled the budget: history was trimmed first, to nothing.
    expect(histories).toEqual([0, 0, 0]);
    store.close();
  });

  it('keeps the newest history that fits, the oldest message kept cut short with a note', async () => {
    const echo = createModelRouter({ models: { providers: {} } });
    const seen: { role: string; content: string }[][] = [];
    const models: ModelRouter = {
      complete(ref, request) {
        seen.push([...request.messages]);
        return echo.complete(ref, request);
      },
    };
    const { store, turn, add } = turnOver(models, { maxPromptChars: 20_000, model: 'builtin/echo' });
    store.messages.append(
      'main',
      [
        { role: 'user', content: 'old question' },
        { role: 'assistant', content: 'old answer' },
        { role: 'user', content: 'q'.repeat(30_000) },
        { role: 'assistant', content: 'the last answer' },
      ],
      null,
      1,
    );
    add('e1', 'a small event');
    await turn('request', new AbortController().signal);
    const [request] = seen;
    expect(request?.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(request?.[0]?.content).toMatch(/^q+ … \[truncated by hookd: \d+ of 30000 characters left out\]$/);
    expect(request?.[1]?.content).toBe('the last answer');
    expect(request?.at(-1)?.content).toContain('a small event');
    expect(sizeOf({ messages: request ?? [] })).toBeLessThanOrEqual(20_000);
    expect(sizeOf({ messages: request ?? [] })).toBeGreaterThan(19_000);
    store.close();
  });

  it('tries again at once with half the size after a context-length refusal, and starts there next turn', async () => {
    model = await startFakeModel(() => 'HEARTBEAT_OK', { maxContextChars: 60_000 });
    const models = createModelRouter({ models: { providers: { fake: { baseUrl: model.url, api: 'openai-chat' } } } });
    const logs: string[] = [];
    const { store, turn, add } = turnOver(models, { maxPromptChars: 200_000, logs });
    add('e1', 'x'.repeat(150_000));
    expect(await turn('request', new AbortController().signal)).toBe(false);
    const sizes = model.requests.map((r) => r.messages.reduce((n, m) => n + m.content.length, 0));
    expect(sizes).toHaveLength(3);
    expect(sizes[0]).toBeGreaterThan(150_000);
    expect(sizes[1]).toBeLessThanOrEqual((sizes[0] as number) / 2);
    expect(sizes[2]).toBeLessThanOrEqual((sizes[1] as number) / 2);
    expect(sizes[2]).toBeLessThanOrEqual(60_000);
    expect(store.events.countPending('main')).toBe(0);
    expect(logs.filter((m) => m === 'the model refused its context; later requests are smaller')).toHaveLength(2);
    // The next turn starts at the size that worked: one request, no refusal.
    add('e2', 'y'.repeat(150_000));
    await turn('request', new AbortController().signal);
    expect(model.requests).toHaveLength(4);
    expect(sizeOf(model.requests[3] as { messages: { content: string }[] })).toBeLessThanOrEqual(sizes[2] as number);
    store.close();
  });
});

describe('a heartbeat whose delivery the stop cuts', () => {
  it('leaves its events pending for the heartbeat at the next start, and keeps no reply in the transcript', async () => {
    const asked: string[] = [];
    const silent = createServer((req) => {
      req.resume();
      asked.push(req.url ?? '');
    });
    await new Promise<void>((done) => silent.listen(0, '127.0.0.1', done));
    const apiBase = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    const config = loadConfig({
      data: { channels: { chatnet: { apiBase, botToken: 'b', defaultTo: '42' } } },
      env: {},
    });
    const store = createStore({ path: ':memory:', synchronous: 'normal' });
    const log = pino({ level: 'silent' });
    const turn = createHeartbeatTurn({
      store: sqliteContract(store),
      models: createModelRouter(config),
      delivery: createDelivery({
        channels: createChannels(config),
        ackMaxChars: 300,
        meta: sqliteBackend(store).meta,
        log,
      }),
      model: 'builtin/echo',
      timeoutSeconds: 5,
      log,
      maxPromptChars: 20_000,
    });
    store.events.insert({ ...event('e1', 'the disk is full'), createdAt: 1 });
    const stop = new AbortController();
    const turning = turn('request', stop.signal);
    await expect.poll(() => asked.length).toBe(1);
    stop.abort();
    expect(await turning).toBe(false);
    // Before: consumed with the reply never delivered, and nothing at the next start.
    expect(store.events.pending('main', 10).map((e) => e.id)).toEqual(['e1']);
    expect(store.messages.recent('main', 10)).toEqual([]);
    silent.closeAllConnections();
    await new Promise((done) => silent.close(done));
    store.close();
  });
});
