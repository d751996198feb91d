import type { DeliveryOutcome, RunStatus, SessionMessage, Store } from '../store/index.js';
import { MAIN_SESSION } from './sink.js';

/** `GET /api/runs/:runId` (DESIGN §8). */
export interface RunView {
  readonly runId: string;
  readonly sessionKey: string;
  readonly name: string | null;
  readonly status: RunStatus;
  readonly model: string;
  readonly output?: string;
  readonly error?: string;
  readonly delivery?: DeliveryOutcome;
}

/** `GET /api/main/events`: the main session's events, oldest first. */
export interface MainEventsView {
  readonly events: readonly { id: string; text: string; createdAt: string; consumed: boolean }[];
}

/** `GET /api/sessions/:key`: a session's transcript. */
export interface SessionView {
  readonly key: string;
  readonly messages: readonly SessionMessage[];
}

/** The read model the admin API shows (DESIGN §8). */
export interface AdminQueries {
  run(runId: string): RunView | undefined;
  mainEvents(): MainEventsView;
  session(key: string): SessionView | undefined;
  /** The mail watcher's status, when one runs (the gateway adds it). */
  mailStatus?(): object | undefined;
}

/** Read-only views of the store for the admin API (DESIGN §8). */
export function createAdminQueries(store: Store): AdminQueries {
  return {
    run(runId) {
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
    session(key) {
      if (!store.messages.has(key)) return undefined;
      return { key, messages: store.messages.list(key) };
    },
  };
}
