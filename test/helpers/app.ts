import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { buildApp } from '../../src/app.js';
import type { Clock } from '../../src/clock.js';
import { loadConfig } from '../../src/config/index.js';
import { compileRoutes } from '../../src/routes.js';
import type { SinkOptions } from '../../src/store/index.js';
import { createStore, createStoreSink, type Store } from '../../src/store/sqlite/index.js';

export const HOOK_TOKEN = 'hook-token-0123456789abcdef';
export const AUTH = { authorization: `Bearer ${HOOK_TOKEN}` };

export interface TestApp {
  app: FastifyInstance;
  store: Store;
  close(): Promise<void>;
}

/**
 * Builds the real app (mappings and transforms included) over an in-memory store, for
 * `app.inject()`. With `logs`, the app logs at info into it, one parsed line each.
 */
export async function createTestApp(
  extra: Record<string, unknown> = {},
  options: {
    logs?: { level: number; msg: string }[];
    /** The refused requests' minutes. */
    clock?: Clock;
    /** The sink's options besides idempotency (`admit`, `retention`, `onRecorded`). */
    sink?: SinkOptions;
    /** Where relative paths (`transformsDir`) start. */
    baseDir?: string;
  } = {},
): Promise<TestApp> {
  const hooks = { enabled: true, token: HOOK_TOKEN, ...(extra.hooks as object | undefined) };
  const data = { ...extra, hooks, storage: { path: ':memory:' } };
  const config = loadConfig({ data, env: {}, ...(options.baseDir ? { baseDir: options.baseDir } : {}) });
  const store = createStore({ path: ':memory:', synchronous: 'normal' });
  const logs = options.logs;
  const log = logs
    ? pino({ level: 'info' }, { write: (line: string) => logs.push(JSON.parse(line)) })
    : pino({ level: 'silent' });
  const { actionOptions, mappings, transforms } = await compileRoutes(config, log);
  const sink = createStoreSink(store, { idempotencyTtlSeconds: config.hooks.idempotency.ttlSeconds, ...options.sink });
  const clock = options.clock ? { clock: options.clock } : {};
  const app = await buildApp({ config, log, sink, actionOptions, mappings, ...clock });
  return {
    app,
    store,
    async close() {
      await app.close();
      transforms.close();
      store.close();
    },
  };
}
