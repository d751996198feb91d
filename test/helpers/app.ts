import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { createModelCatalog } from '../../src/actions/index.js';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/index.js';
import { createStoreSink } from '../../src/runtime/index.js';
import { createStore, type Store } from '../../src/store/index.js';

export const HOOK_TOKEN = 'hook-token-0123456789abcdef';
export const AUTH = { authorization: `Bearer ${HOOK_TOKEN}` };

export interface TestApp {
  app: FastifyInstance;
  store: Store;
  close(): Promise<void>;
}

/** Builds the real app over an in-memory store, for `app.inject()`. */
export async function createTestApp(extra: Record<string, unknown> = {}): Promise<TestApp> {
  const hooks = { enabled: true, token: HOOK_TOKEN, ...(extra.hooks as object | undefined) };
  const config = loadConfig({ data: { ...extra, hooks, storage: { path: ':memory:' } }, env: {} });
  const store = createStore({ path: ':memory:', synchronous: 'normal' });
  const log = pino({ level: 'silent' });
  const app = await buildApp({
    config,
    log,
    sink: createStoreSink(store),
    actionOptions: { models: createModelCatalog(config), chatnetConfigured: config.channels.chatnet !== undefined },
  });
  return {
    app,
    store,
    async close() {
      await app.close();
      store.close();
    },
  };
}
