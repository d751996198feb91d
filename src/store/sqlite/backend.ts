import { promisedAll, type StoreBackend } from '../contract.js';
import { sqliteContract } from './contract.js';
import { createStoreSink } from './sink.js';
import type { Store } from './store.js';

/** The embedded SQLite store as the gateway runs on it (the default, one node). */
export function sqliteBackend(store: Store): StoreBackend {
  return {
    data: sqliteContract(store),
    meta: {
      get: async <T>(key: string) => store.meta.get<T>(key),
      set: async (key, value) => store.meta.set(key, value),
    },
    consoleSessions: promisedAll(store.consoleSessions),
    createSink: (options) => createStoreSink(store, options),
  };
}
