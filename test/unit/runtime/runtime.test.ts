import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/index.js';
import { createModelRouter } from '../../../src/providers/index.js';
import { createRuntime } from '../../../src/runtime/index.js';
import { createStore, sqliteBackend } from '../../../src/store/sqlite/index.js';
import { createManualClock, until } from '../../helpers/clock.js';

describe('the runtime', () => {
  it('purges expired idempotency records at start and every 10 minutes', async () => {
    const clock = createManualClock();
    const start = clock.now();
    const store = createStore({ path: ':memory:', synchronous: 'normal' });
    const record = (key: string, expiresAt: number) =>
      store.idempotency.put({ scope: 's', key, bodyHash: 'h', status: 200, response: '{}', createdAt: 0, expiresAt });
    record('expired', start);
    record('in 5 min', start + 5 * 60_000);
    record('in 15 min', start + 15 * 60_000);
    const keys = () =>
      (store.db.prepare('SELECT key FROM idempotency ORDER BY key').all() as { key: string }[]).map((r) => r.key);
    const runtime = createRuntime({
      config: loadConfig({ data: { agents: { defaults: { heartbeat: { every: '0' } } } }, env: {} }),
      backend: sqliteBackend(store, clock.now),
      log: pino({ level: 'silent' }),
      models: createModelRouter({ models: { providers: {} } }),
      channels: new Map(),
      clock,
    });
    await runtime.start();
    await until(() => keys().length === 2);
    expect(keys()).toEqual(['in 15 min', 'in 5 min']);
    // Before the 10 minutes, no timer has fired: nothing more is purged.
    await clock.advance(10 * 60_000 - 1);
    expect(keys()).toEqual(['in 15 min', 'in 5 min']);
    await clock.advance(1);
    await until(() => keys().length === 1);
    expect(keys()).toEqual(['in 15 min']);
    await clock.advance(10 * 60_000);
    await until(() => keys().length === 0);
    await runtime.stop();
    store.close();
  });
});
