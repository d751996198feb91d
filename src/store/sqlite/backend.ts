import type { StoreBackend } from '../contract.js';
import { sqliteContract } from './contract.js';
import { createStoreSink } from './sink.js';
import type { Store } from './store.js';

/** The embedded SQLite store as the gateway runs on it (the default, one node); `now` is its clock. */
export function sqliteBackend(store: Store, now: () => number = Date.now): StoreBackend {
  const sessions = store.consoleSessions;
  return {
    data: sqliteContract(store, now),
    meta: {
      get: async <T>(key: string) => store.meta.get<T>(key),
      set: async (key, value) => store.meta.set(key, value),
    },
    consoleSessions: {
      insert: async ({ tokenHash, csrf, ttlMs }) => {
        const at = now();
        sessions.insert({ tokenHash, csrf, createdAt: at, expiresAt: at + ttlMs });
      },
      find: async (tokenHash) => sessions.find(tokenHash, now()),
      delete: async (tokenHash) => sessions.delete(tokenHash),
      prune: async (keep) => sessions.prune(now(), keep),
    },
    createSink: (options) => createStoreSink(store, { now, ...options }),
  };
}
