import { isUtf8 } from 'node:buffer';
import { MAIN_SESSION } from '../../action-shape.js';
import type {
  AlertFilter,
  EventRecord,
  RequestLogEntry,
  RequestLogFilter,
  RequestLogRecord,
  RunAttempt,
  RunListFilter,
  RunRecord,
  RunStatusRow,
  StoreContract,
  StoredAlert,
} from '../../store/index.js';
import type {
  AlertsView,
  AlertView,
  EventView,
  MainEventsView,
  OverviewView,
  RequestDetail,
  RequestView,
  RunListItem,
  RunOutcome,
  RunTranscript,
  RunView,
  SessionsView,
  SessionView,
} from '../../views.js';
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
  mainEvents(): Promise<MainEventsView>;
  session(key: string): Promise<SessionView | undefined>;
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

/**
 * Read-only views of the store for the admin API (docs/runtime.md#admin-api); `waitingOf` adds
 * what this node knows of a run's wait to what the store says (docs/runtime.md#waiting).
 */
export function createAdminQueries(
  store: StoreContract,
  now: () => number = Date.now,
  waitingOf: WaitingOf = () => undefined,
): AdminQueries {
  const toRunView = (run: RunRecord, attempts: readonly RunAttempt[]) =>
    runViewOf(run, attempts, waitOf(run, now(), waitingOf));
  const toRunListItem = (run: RunRecord, attempts: readonly RunAttempt[]) => ({
    ...toRunView(run, attempts),
    ...runTimesOf(run),
  });
  /** Runs with their attempts, read in one query. */
  const withAttempts = async <R extends RunRecord>(runs: readonly R[]) => {
    const attempts = await store.runs.attempts(runs.map((r) => r.id));
    return runs.map((run) => ({ run, attempts: attempts.filter((a) => a.runId === run.id) }));
  };
  const itemOf = async (id: string) => {
    const run = await store.runs.get(id);
    if (!run) return undefined;
    const [found] = await withAttempts([run]);
    return found && toRunListItem(found.run, found.attempts);
  };
  return {
    async run(runId) {
      const run = await store.runs.get(runId);
      if (!run) return undefined;
      const [found] = await withAttempts([run]);
      return found && toRunView(found.run, found.attempts);
    },
    runItem: itemOf,
    async runs(filter) {
      const rows = await store.runs.list({ ...filter, limit: filter.limit + 1 });
      const page = rows.slice(0, filter.limit);
      const last = page.at(-1);
      return {
        runs: (await withAttempts(page)).map(({ run, attempts }) => toRunListItem(run, attempts)),
        nextCursor: rows.length > filter.limit && last ? String(last.seq) : null,
      };
    },
    async requests(filter) {
      const rows = await store.requests.list({ ...filter, limit: filter.limit + 1 });
      const page = rows.slice(0, filter.limit);
      const last = page.at(-1);
      // One query for the runs of the whole page, never one per request.
      const runIds = page.flatMap((entry) => entry.runIds);
      const runs = new Map((runIds.length === 0 ? [] : await store.runs.outcomes(runIds)).map((r) => [r.id, r]));
      return {
        requests: page.map(({ headers: _headers, credentials: _credentials, ...entry }) => {
          const outcome = outcomeOf(entry.runIds, runs);
          return { ...toRequestView(entry), ...(outcome ? { outcome } : {}) };
        }),
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
      const { body, headers, credentials, receipt: _receipt, ...entry } = record;
      return {
        ...toRequestView(entry),
        headers,
        credentials,
        ...bodyView(body),
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
    async alerts(filter) {
      const rows = await store.alerts.list({ ...filter, limit: filter.limit + 1 });
      const page = rows.slice(0, filter.limit);
      const last = page.at(-1);
      return {
        alerts: page.map(alertView),
        nextCursor: rows.length > filter.limit && last ? String(last.seq) : null,
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
 * A kept body as the API shows it: its text, or, when its bytes are not valid UTF-8 (a binary
 * body, or one cut inside a character), base64 marked `bodyEncoding: 'base64'`, so that no byte
 * is lost to a replacement character (docs/runtime.md#request-log-and-replay).
 */
function bodyView(body: Buffer): Pick<RequestDetail, 'body' | 'bodyEncoding'> {
  return isUtf8(body) ? { body: body.toString('utf8') } : { body: body.toString('base64'), bodyEncoding: 'base64' };
}

function toRequestView({
  seq: _seq,
  receivedAt,
  replayedAt,
  ...entry
}: Omit<RequestLogEntry, 'headers' | 'credentials'>): RequestView {
  return {
    ...entry,
    receivedAt: iso(receivedAt),
    ...(replayedAt === undefined ? {} : { replayedAt: iso(replayedAt) }),
  };
}

/** A just-written record as the list shows it: the runs it made are queued. */
export function requestViewOf(record: RequestLogRecord): RequestView {
  const { body: _body, headers: _headers, credentials: _credentials, receipt: _receipt, receivedAt, ...rest } = record;
  return {
    ...rest,
    receivedAt: iso(receivedAt),
    ...(record.runIds.length > 0 ? { outcome: { status: 'queued' } } : {}),
  };
}

/**
 * What became of a request's runs: their common status, else `mixed`; their common delivery
 * status, else `mixed` (absent while none has one). Undefined for a request that made no run
 * (or whose runs are pruned).
 */
export function outcomeOf(runIds: readonly string[], runs: ReadonlyMap<string, RunStatusRow>): RunOutcome | undefined {
  const found = runIds.flatMap((id) => runs.get(id) ?? []);
  const [first] = found;
  if (!first) return undefined;
  const status = found.every((r) => r.status === first.status) ? first.status : 'mixed';
  const delivered = found.some((r) => r.delivery !== undefined);
  const delivery = found.every((r) => r.delivery === first.delivery) ? first.delivery : 'mixed';
  return { status, ...(delivered && delivery !== undefined ? { delivery } : {}) };
}
