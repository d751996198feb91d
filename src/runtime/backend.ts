import { promisedAll, type Store, type StoreBackend, sqliteContract } from '../store/index.js';
import { createStoreSink } from './sink.js';

/** The embedded SQLite store as the gateway runs on it (the default, one node). */
export function sqliteBackend(store: Store): StoreBackend {
  return {
    kind: 'sqlite',
    data: sqliteContract(store),
    meta: {
      get: async <T>(key: string) => store.meta.get<T>(key),
      set: async (key, value) => store.meta.set(key, value),
    },
    consoleSessions: promisedAll(store.consoleSessions),
    createSink: (options) => createStoreSink(store, options),
  };
}
