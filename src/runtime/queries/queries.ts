import { MAIN_SESSION } from '../../action-shape.js';
import type {
  EventRecord,
  RequestLogEntry,
  RequestLogFilter,
  RequestLogRecord,
  RunListFilter,
  RunRecord,
  StoreContract,
} from '../../store/index.js';
import type {
  EventView,
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
  mainEvents(): Promise<MainEventsView>;
  session(key: string): Promise<SessionView | undefined>;
  /** Sessions with a transcript, most recently active first. */
  sessions(limit: number): Promise<SessionsView>;
  /** The messages a run sent to the model and its reply, and when it was queued, started and ended. */
  transcript(runId: string): Promise<RunTranscript | undefined>;
  /** Requests of the last hour and runs by status, for the console's health strip. */
  overview(): Promise<Pick<OverviewView, 'requestsLastHour' | 'runsByStatus'>>;
  /** The mail watcher's status, when one runs (the gateway adds it; it is this node's). */
  mailStatus?(): object | undefined;
}

/** Read-only views of the store for the admin API (docs/runtime.md#admin-api). */
export function createAdminQueries(store: StoreContract, now: () => number = Date.now): AdminQueries {
  const itemOf = async (id: string) => {
    const run = await store.runs.get(id);
    return run && toRunListItem(run);
  };
  return {
    async run(runId) {
      const run = await store.runs.get(runId);
      return run && toRunView(run);
    },
    runItem: itemOf,
    async runs(filter) {
      const rows = await store.runs.list({ ...filter, limit: filter.limit + 1 });
      const page = rows.slice(0, filter.limit);
      const last = page.at(-1);
      return {
        runs: page.map(toRunListItem),
        nextCursor: rows.length > filter.limit && last ? String(last.seq) : null,
      };
    },
    async requests(filter) {
      const rows = await store.requests.list({ ...filter, limit: filter.limit + 1 });
      const page = rows.slice(0, filter.limit);
      const last = page.at(-1);
      return {
        requests: page.map(({ headers: _headers, ...entry }) => toRequestView(entry)),
        nextCursor: rows.length > filter.limit && last ? String(last.seq) : null,
      };
    },
    async request(id) {
      const record = await store.requests.get(id);
      if (!record) return undefined;
      const failure = await store.failedRequests.forRequest(id);
      const events = await Promise.all(record.eventIds.map((eventId) => store.events.get(eventId)));
      const runs = await Promise.all(record.runIds.map(itemOf));
      // The receipt stays inside: it is what a replay checks, not something to show.
      const { body, headers, receipt: _receipt, ...entry } = record;
      return {
        ...toRequestView(entry),
        headers,
        body: body.toString('utf8'),
        events: events.flatMap((event) => (event ? [eventView(event)] : [])),
        runs: runs.flatMap((run) => run ?? []),
        ...(failure ? { failure: { code: failure.code, error: failure.error } } : {}),
      };
    },
    async sessions(limit) {
      return { sessions: (await store.messages.sessions(limit)).map((s) => ({ ...s, lastAt: iso(s.lastAt) })) };
    },
    async transcript(runId) {
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
    },
    async overview() {
      return {
        requestsLastHour: await store.requests.countSince(now() - 3_600_000),
        runsByStatus: await store.runs.countByStatus(),
      };
    },
    async mainEvents() {
      return {
        events: (await store.events.list(MAIN_SESSION)).map(eventView),
      };
    },
    async session(key) {
      if (!(await store.messages.has(key))) return undefined;
      return { key, messages: await store.messages.list(key) };
    },
  };
}

const iso = (ms: number) => new Date(ms).toISOString();

function eventView(e: EventRecord): EventView {
  return { id: e.id, text: e.text, createdAt: iso(e.createdAt), consumed: e.consumedAt !== null };
}

function toRunView(run: RunRecord): RunView {
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
}

function toRunListItem(run: RunRecord): RunListItem {
  return {
    ...toRunView(run),
    ...(run.mappingId === undefined ? {} : { mappingId: run.mappingId }),
    createdAt: iso(run.createdAt),
    ...(run.startedAt === undefined ? {} : { startedAt: iso(run.startedAt) }),
    ...(run.finishedAt === undefined ? {} : { finishedAt: iso(run.finishedAt) }),
  };
}

function toRequestView({ seq: _seq, receivedAt, replayedAt, ...entry }: Omit<RequestLogEntry, 'headers'>): RequestView {
  return {
    ...entry,
    receivedAt: iso(receivedAt),
    ...(replayedAt === undefined ? {} : { replayedAt: iso(replayedAt) }),
  };
}

/** A just-written record as the list shows it. */
export function requestViewOf(record: RequestLogRecord): RequestView {
  const { body: _body, headers: _headers, receipt: _receipt, receivedAt, ...rest } = record;
  return { ...rest, receivedAt: iso(receivedAt) };
}
