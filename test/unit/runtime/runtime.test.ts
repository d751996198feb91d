import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../../src/config/index.js';
import { createModelRouter } from '../../../src/providers/index.js';
import { createRuntime } from '../../../src/runtime/index.js';
import { createStore, sqliteBackend } from '../../../src/store/sqlite/index.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('the runtime', () => {
  it('purges expired idempotency records at start and every 10 minutes', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'setInterval', 'clearInterval'] });
    const store = createStore({ path: ':memory:', synchronous: 'normal' });
    const start = Date.now();
    const record = (key: string, expiresAt: number) =>
      store.idempotency.put({ scope: 's', key, bodyHash: 'h', status: 200, response: '{}', createdAt: 0, expiresAt });
    record('expired', start);
    record('in 5 min', start + 5 * 60_000);
    record('in 15 min', start + 15 * 60_000);
    const keys = () =>
      (store.db.prepare('SELECT key FROM idempotency ORDER BY key').all() as { key: string }[]).map((r) => r.key);
    const runtime = createRuntime({
      config: loadConfig({ data: { agents: { defaults: { heartbeat: { every: '0' } } } }, env: {} }),
      backend: sqliteBackend(store),
      log: pino({ level: 'silent' }),
      models: createModelRouter({ models: { providers: {} } }),
      channels: new Map(),
    });
    await runtime.start();
    expect(keys()).toEqual(['in 15 min', 'in 5 min']);
    vi.advanceTimersByTime(10 * 60_000 - 1);
    expect(keys()).toEqual(['in 15 min', 'in 5 min']);
    vi.advanceTimersByTime(1);
    expect(keys()).toEqual(['in 15 min']);
    vi.advanceTimersByTime(10 * 60_000);
    expect(keys()).toEqual([]);
    await runtime.stop();
    store.close();
  });
});
