import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createModelRouter } from '../../../src/providers/index.js';
import { createDelivery } from '../../../src/runtime/delivery.js';
import { createHeartbeat } from '../../../src/runtime/heartbeat.js';
import { createStore } from '../../../src/store/index.js';

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
    const heartbeat = createHeartbeat({
      store,
      models: createModelRouter({ models: { providers: {} } }),
      delivery: createDelivery({ channels: new Map(), ackMaxChars: 300, meta: store.meta, log }),
      model: 'builtin/echo',
      timeoutSeconds: 5,
      everyMs: 0,
      log,
      coalesceMs: 1,
      maxEventsPerTurn: 2,
    });
    heartbeat.request();
    await expect.poll(() => store.events.countPending('main')).toBe(0);
    const turns = store.messages.list('main').filter((m) => m.role === 'user');
    expect(turns).toHaveLength(3);
    expect(turns[0]?.content).toContain('event 1');
    expect(turns[0]?.content).toContain('event 2');
    expect(turns[0]?.content).not.toContain('event 3');
    expect(turns[2]?.content).toContain('event 5');
    await heartbeat.stop();
    store.close();
  });
});
