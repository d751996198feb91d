import { isUtf8 } from 'node:buffer';
import type {
  EventRecord,
  RequestLogEntry,
  RequestLogFilter,
  RequestLogRecord,
  RunStatusRow,
  StoreContract,
} from '../../store/index.js';
import type { EventView, RequestDetail, RequestView, RunListItem, RunOutcome } from '../../views.js';
import { pageOf } from './page.js';

/**
 * The request log as the admin API shows it (docs/runtime.md#request-log-and-replay): a page of
 * requests with their runs' outcome, and one request whole.
 */

export const iso = (ms: number): string => new Date(ms).toISOString();

/** A stored system event as the API shows it. */
export function eventView(e: EventRecord): EventView {
  return { id: e.id, text: e.text, createdAt: iso(e.createdAt), consumed: e.consumedAt !== null };
}

/** A page of the request log, newest first, each request with what became of its runs. */
export async function requestsPage(
  store: StoreContract,
  filter: RequestLogFilter,
): Promise<{ requests: RequestView[]; nextCursor: string | null }> {
  const { page, nextCursor } = pageOf(await store.requests.list({ ...filter, limit: filter.limit + 1 }), filter.limit);
  // One query for the runs of the whole page, never one per request.
  const runIds = page.flatMap((entry) => entry.runIds);
  const runs = new Map((runIds.length === 0 ? [] : await store.runs.outcomes(runIds)).map((r) => [r.id, r]));
  return {
    requests: page.map(({ headers: _headers, credentials: _credentials, ...entry }) => {
      const outcome = outcomeOf(entry.runIds, runs);
      return { ...toRequestView(entry), ...(outcome ? { outcome } : {}) };
    }),
    nextCursor,
  };
}

/** One request whole: its headers, credentials, body, events, runs (as `runItem` shows them) and kept failure. */
export async function requestDetail(
  store: StoreContract,
  id: string,
  runItem: (runId: string) => Promise<RunListItem | undefined>,
): Promise<RequestDetail | undefined> {
  const record = await store.requests.get(id);
  if (!record) return undefined;
  const failure = await store.failedRequests.forRequest(id);
  const events = await Promise.all(record.eventIds.map((eventId) => store.events.get(eventId)));
  const runs = await Promise.all(record.runIds.map(runItem));
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
