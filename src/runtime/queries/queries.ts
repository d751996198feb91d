import { MAIN_SESSION } from '../../action-shape.js';
import type { AlertsView, AlertView } from '../../alert-views.js';
import type {
  AlertFilter,
  RequestLogFilter,
  RunAttempt,
  RunListFilter,
  RunRecord,
  StoreContract,
  StoredAlert,
} from '../../store/index.js';
import type {
  MainEventsView,
  OverviewView,
  RequestDetail,
  RequestView,
  RunListItem,
  RunTranscript,
  RunView,
  SessionsView,
  SessionView,
} from '../../views.js';
import { pageOf } from './page.js';
import { eventView, iso, requestDetail, requestsPage } from './request-queries.js';
import { runTimesOf, runViewOf, type WaitingOf, waitOf } from './run-view.js';

/**
 * The read model the admin API shows (docs/runtime.md#admin-api, docs/runtime.md#request-log-and-replay). Every answer is a promise: a shared
 * store (PostgreSQL, docs/scale.md) is a round trip away.
 */
export interface AdminQueries {
  run(runId: string): Promise<RunView | undefined>;
  /** Newest first, with the cursor of the next page when there is one. */
  runs(filter: RunListFilter): Promise<{ runs: RunListItem[]; nextCursor: string | null }>;
  /** One run as lists show it. */
  runItem(runId: string): Promise<RunListItem | undefined>;
  requests(filter: RequestLogFilter): Promise<{ requests: RequestView[]; nextCursor: string | null }>;
  request(id: string): Promise<RequestDetail | undefined>;
  /** The newest `limit` events of the main session. */
  mainEvents(limit: number): Promise<MainEventsView>;
  /** The newest `limit` messages of a session; undefined when it has none. */
  session(key: string, limit: number): Promise<SessionView | undefined>;
  /** Sessions with a transcript, most recently active first. */
  sessions(limit: number): Promise<SessionsView>;
  /** The messages a run sent to the model and its reply, and when it was queued, started and ended. */
  transcript(runId: string): Promise<RunTranscript | undefined>;
  /** Requests of the last hour and runs by status, for the console's health strip. */
  overview(): Promise<Pick<OverviewView, 'requestsLastHour' | 'runsByStatus'>>;
  /** Alert messages, newest first (docs/operations.md#alerts). */
  alerts(filter: AlertFilter): Promise<AlertsView>;
  /** The mail watcher's status, when one runs (the gateway adds it; it is this node's). */
  mailStatus?(): object | undefined;
}

/** What the run queries read: the store, this node's clock, and what this node knows of a run's wait. */
export interface RunQueries {
  readonly store: StoreContract;
  readonly now: () => number;
  readonly waitingOf: WaitingOf;
}

/**
 * Read-only views of the store for the admin API (docs/runtime.md#admin-api); `waitingOf` adds
 * what this node knows of a run's wait to what the store says (docs/runtime.md#waiting).
 */
export function createAdminQueries(
  store: StoreContract,
  now: () => number = Date.now,
  waitingOf: WaitingOf = () => undefined,
): AdminQueries {
  const q: RunQueries = { store, now, waitingOf };
  const runItem = (runId: string) => runItemOf(q, runId);
  return {
    run: (runId) => runOf(q, runId),
    runItem,
    runs: (filter) => runsPage(q, filter),
    requests: (filter) => requestsPage(store, filter),
    request: (id) => requestDetail(store, id, runItem),
    async sessions(limit) {
      return {
        sessions: (await store.messages.sessions(limit, SESSIONS_WITHIN)).map((s) => ({ ...s, lastAt: iso(s.lastAt) })),
      };
    },
    transcript: (runId) => transcriptOf(store, runId),
    async overview() {
      return {
        requestsLastHour: await store.requests.countSince(now() - 3_600_000),
        runsByStatus: await store.runs.countByStatus(),
      };
    },
    alerts: (filter) => alertsPage(store, filter),
    async mainEvents(limit) {
      const { items, more } = newest(await store.events.list(MAIN_SESSION, limit + 1), limit);
      return { events: items.map(eventView), more };
    },
    async session(key, limit) {
      if (!(await store.messages.has(key))) return undefined;
      const { items, more } = newest(await store.messages.recent(key, limit + 1), limit);
      return { key, messages: items, more };
    },
  };
}

/** Runs with their attempts, read in one query. */
async function withAttempts<R extends RunRecord>(store: StoreContract, runs: readonly R[]) {
  const attempts = await store.runs.attempts(runs.map((r) => r.id));
  return runs.map((run) => ({ run, attempts: attempts.filter((a) => a.runId === run.id) }));
}

/** A run as the admin API shows it, with why it waits now. */
const runViewAt = (q: RunQueries, run: RunRecord, attempts: readonly RunAttempt[]) =>
  runViewOf(run, attempts, waitOf(run, q.now(), q.waitingOf));

/** A run as lists show it: its view and its times. */
const listItemOf = (q: RunQueries, run: RunRecord, attempts: readonly RunAttempt[]): RunListItem => ({
  ...runViewAt(q, run, attempts),
  ...runTimesOf(run),
});

/** One run, with its attempts. */
export async function runOf(q: RunQueries, runId: string): Promise<RunView | undefined> {
  const run = await q.store.runs.get(runId);
  if (!run) return undefined;
  const [found] = await withAttempts(q.store, [run]);
  return found && runViewAt(q, found.run, found.attempts);
}

/** One run as lists show it. */
export async function runItemOf(q: RunQueries, runId: string): Promise<RunListItem | undefined> {
  const run = await q.store.runs.get(runId);
  if (!run) return undefined;
  const [found] = await withAttempts(q.store, [run]);
  return found && listItemOf(q, found.run, found.attempts);
}

/** The sessions `GET /api/sessions` lists: those with a message among the newest 20,000. */
export const SESSIONS_WITHIN = 20_000;
/** How many runs a page of a filtered run list looks at, at most (about 3 ms on SQLite). */
export const RUN_WINDOW = 10_000;

/**
 * A page of runs, newest first, their attempts read in one query. A filtered page looks at the
 * `window` runs before its cursor (runs are never pruned: a rare status or mapping was a scan of
 * every run on the event loop): short of `limit` matches, its cursor is where it stopped looking.
 */
export async function runsPage(
  q: RunQueries,
  filter: RunListFilter,
  window = RUN_WINDOW,
): Promise<{ runs: RunListItem[]; nextCursor: string | null }> {
  const bounds: Pick<RunListFilter, 'beforeSeq' | 'afterSeq'> =
    filter.status === undefined && filter.mapping === undefined ? {} : await windowOf(q, filter, window);
  const listed = await q.store.runs.list({ ...filter, ...bounds, limit: filter.limit + 1 });
  const { page, nextCursor } = pageOf(listed, filter.limit);
  const floor = (bounds.afterSeq ?? 0) + 1;
  return {
    runs: (await withAttempts(q.store, page)).map(({ run, attempts }) => listItemOf(q, run, attempts)),
    nextCursor: nextCursor ?? (floor > 1 ? String(floor) : null),
  };
}

/** The runs a filtered page looks at: the `window` before its cursor, or before the newest run's. */
async function windowOf(q: RunQueries, filter: RunListFilter, window: number) {
  const before = filter.beforeSeq ?? ((await q.store.runs.list({ limit: 1 }))[0]?.seq ?? 0) + 1;
  return { beforeSeq: before, afterSeq: Math.max(0, before - 1 - window) };
}

/** The messages a run sent to the model and its reply, and when it was queued, started and ended. */
export async function transcriptOf(store: StoreContract, runId: string): Promise<RunTranscript | undefined> {
  const run = await store.runs.get(runId);
  if (!run) return undefined;
  return {
    runId,
    sessionKey: run.sessionKey,
    createdAt: iso(run.createdAt),
    ...(run.startedAt === undefined ? {} : { startedAt: iso(run.startedAt) }),
    ...(run.finishedAt === undefined ? {} : { finishedAt: iso(run.finishedAt) }),
    messages: await store.messages.ofRun(run.sessionKey, runId),
  };
}

/** A page of alert messages, newest first. */
async function alertsPage(store: StoreContract, filter: AlertFilter): Promise<AlertsView> {
  const { page, nextCursor } = pageOf(await store.alerts.list({ ...filter, limit: filter.limit + 1 }), filter.limit);
  return { alerts: page.map(alertView), nextCursor };
}

function alertView(a: StoredAlert): AlertView {
  return {
    id: a.id,
    at: iso(a.at),
    kind: a.kind,
    condition: a.condition,
    source: a.source,
    count: a.count,
    ...(a.lastError === undefined ? {} : { lastError: a.lastError }),
    link: a.link,
    text: a.text,
    ...(a.recoveredAt === undefined ? {} : { recoveredAt: iso(a.recoveredAt) }),
    ...(a.recovers === undefined ? {} : { recovers: a.recovers }),
  };
}

/**
 * The newest `limit` of `rows` (the newest `limit + 1`, oldest first), and whether older ones
 * were left out: events and messages are never pruned, and a list of them all would grow with
 * the gateway's age.
 */
function newest<T>(rows: readonly T[], limit: number): { items: readonly T[]; more: boolean } {
  const more = rows.length > limit;
  return { items: more ? rows.slice(1) : rows, more };
}
