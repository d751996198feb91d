import type { Store } from '../store/index.js';
import { MAIN_SESSION } from './sink.js';

/** Read-only views for the admin API (DESIGN §8). */
export function createAdminQueries(store: Store) {
  return {
    run(runId: string) {
      const run = store.runs.get(runId);
      if (!run) return undefined;
      return {
        runId: run.id,
        sessionKey: run.sessionKey,
        name: run.name ?? null,
        status: run.status,
        model: run.model,
        ...(run.output === undefined ? {} : { output: run.output }),
        ...(run.error === undefined ? {} : { error: run.error }),
        ...(run.delivery === undefined ? {} : { delivery: run.delivery }),
      };
    },
    mainEvents() {
      return {
        events: store.events.list(MAIN_SESSION).map((e) => ({
          id: e.id,
          text: e.text,
          createdAt: new Date(e.createdAt).toISOString(),
          consumed: e.consumedAt !== null,
        })),
      };
    },
    session(key: string) {
      if (!store.messages.has(key)) return undefined;
      return { key, messages: store.messages.list(key) };
    },
  };
}

export type AdminQueries = ReturnType<typeof createAdminQueries>;
