import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createModelRouter } from '../../../../src/providers/index.js';
import { createDelivery } from '../../../../src/runtime/delivery/delivery.js';
import { createHeartbeatTurn, eventsWithin } from '../../../../src/runtime/heartbeat/heartbeat-turn.js';
import type { ModelRouter } from '../../../../src/runtime/index.js';
import type { EventRecord } from '../../../../src/store/index.js';
import { createStore, sqliteBackend, sqliteContract } from '../../../../src/store/sqlite/index.js';

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

describe('a heartbeat turn (issue 13, item 6)', () => {
  it('stays within maxPromptChars when events outgrow a context, and consumes the backlog over several turns', async () => {
    const store = createStore({ path: ':memory:', synchronous: 'normal' });
    const log = pino({ level: 'silent' });
    const echo = createModelRouter({ models: { providers: {} } });
    const prompts: number[] = [];
    const models: ModelRouter = {
      complete(ref, request) {
        prompts.push(request.messages.at(-1)?.content.length ?? 0);
        return echo.complete(ref, request);
      },
    };
    const turn = createHeartbeatTurn({
      store: sqliteContract(store),
      models,
      delivery: createDelivery({ channels: new Map(), ackMaxChars: 300, meta: sqliteBackend(store).meta, log }),
      model: 'builtin/echo',
      timeoutSeconds: 5,
      log,
      maxPromptChars: 200_000,
      historyLimit: 0,
    });
    store.transaction(() => {
      for (const id of ['e1', 'e2', 'e3']) store.events.insert({ ...event(id, 'w'.repeat(250_000)), createdAt: 1 });
    });
    const signal = new AbortController().signal;
    const more: boolean[] = [];
    while (store.events.countPending('main') > 0 && more.length < 5) more.push(await turn('request', signal));
    expect(more).toEqual([true, true, false]);
    expect(prompts).toHaveLength(3);
    for (const length of prompts) expect(length).toBeLessThan(202_000);
    store.close();
  });
});
