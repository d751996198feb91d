import type { FastifyInstance } from 'fastify';
import { hookdError } from '../errors.js';
import type { ActivityFeed, AdminQueries } from '../runtime/index.js';
import type { DeliveryOutcome, RequestLogFilter, RunListFilter } from '../store/index.js';
import { RUN_STATUSES } from '../views.js';
import type { ConsoleAuth } from './console-auth.js';
import { registerStream } from './live-stream.js';
import type { Replayer } from './replay.js';

/** What the request log's admin routes need (docs/runtime.md#request-log-and-replay). */
export interface RequestLogRoutesOptions {
  readonly queries: AdminQueries;
  readonly replay: Replayer;
  readonly redeliver: (runId: string) => Promise<DeliveryOutcome>;
  readonly activity: ActivityFeed;
  /** Console sessions: a stream opened with one ends when it signs out or expires. */
  readonly console?: ConsoleAuth;
}

const MAX_LIMIT = 500;
const DEFAULT_LIMIT = 50;
/** What `GET /api/runs?status=` takes: a run's status, or `failed` (error, timeout or a failed delivery). */
const RUN_FILTERS: readonly NonNullable<RunListFilter['status']>[] = [...RUN_STATUSES, 'failed'];
const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

type Query = Record<string, string | undefined>;

/** The request log, replay, runs, redelivery and the live stream; mounted behind the admin guard. */
export function requestLogRoutes(app: FastifyInstance, options: RequestLogRoutesOptions): void {
  const { queries } = options;
  app.get('/api/requests', async (request) => {
    const query = request.query as Query;
    return queries.requests(requestFilter(query));
  });
  app.get<{ Params: { id: string } }>('/api/requests/:id', async (request) => {
    const detail = await queries.request(request.params.id);
    if (!detail) throw hookdError('NOT_FOUND', { resource: 'request', id: request.params.id });
    return detail;
  });
  app.post<{ Params: { id: string } }>('/api/requests/:id/replay', async (request, reply) => {
    // The replay is logged under this request's id: the answer's x-request-id names it.
    const answer = await options.replay(request.params.id, request.id, replayOptionsOf(request.body));
    reply.header('replay-of', request.params.id).code(answer.status);
    // The answer of the run its idempotency key already made (the sender's retry, another replay).
    if (answer.remembered) reply.header('idempotent-replayed', 'true');
    return answer.body === null ? reply.send() : reply.send(answer.body);
  });
  app.get('/api/runs', async (request) => queries.runs(runFilter(request.query as Query)));
  app.post<{ Params: { runId: string } }>('/api/runs/:runId/redeliver', async (request) => {
    const delivery = await options.redeliver(request.params.runId);
    return { runId: request.params.runId, delivery };
  });
  registerStream(app, {
    activity: options.activity,
    ...(options.console ? { console: options.console } : {}),
  });
}

/** `limit`: 50 unless given, 1 to 500. */
export function limitOf(query: Query): number {
  if (query.limit === undefined) return DEFAULT_LIMIT;
  const limit = Number(query.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT)
    throw hookdError('INVALID_FIELD', { field: 'limit', expected: `a whole number from 1 to ${MAX_LIMIT}` });
  return limit;
}

/** `cursor`: the `nextCursor` of the page before. */
export function cursorOf(query: Query): { beforeSeq?: number } {
  if (query.cursor === undefined) return {};
  if (!/^[1-9][0-9]{0,15}$/.test(query.cursor))
    throw hookdError('INVALID_FIELD', { field: 'cursor', expected: 'the nextCursor of a previous page' });
  return { beforeSeq: Number(query.cursor) };
}

/** `since`: an ISO time, or a duration back from now (`30m`, `1h`, `7d`). */
export function sinceOf(value: string, now = Date.now()): number {
  const ago = /^([1-9][0-9]{0,6})(s|m|h|d)$/.exec(value);
  if (ago) return now - Number(ago[1]) * UNIT_MS[ago[2] as keyof typeof UNIT_MS];
  const at = /^\d{4}-\d{2}-\d{2}/.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(at))
    throw hookdError('INVALID_FIELD', { field: 'since', expected: 'an ISO time or a duration such as 30m, 1h, 7d' });
  return at;
}

function requestFilter(query: Query): RequestLogFilter {
  const filter: { -readonly [K in keyof RequestLogFilter]: RequestLogFilter[K] } = {
    limit: limitOf(query),
    ...cursorOf(query),
  };
  if (query.path) filter.path = query.path;
  if (query.status !== undefined) {
    const match = /^([1-5])(?:xx|([0-9]{2}))$/.exec(query.status);
    if (!match)
      throw hookdError('INVALID_FIELD', { field: 'status', expected: 'a status such as 500, or a class such as 5xx' });
    filter.status = match[2] === undefined ? { class: Number(match[1]) } : { exact: Number(query.status) };
  }
  if (query.failed !== undefined) filter.failed = booleanOf('failed', query.failed);
  if (query.since !== undefined) filter.since = sinceOf(query.since);
  if (query.replayed !== undefined) filter.replayed = booleanOf('replayed', query.replayed);
  if (query.replays !== undefined) filter.replays = booleanOf('replays', query.replays);
  return filter;
}

function runFilter(query: Query): RunListFilter {
  const status = query.status as RunListFilter['status'];
  if (status !== undefined && !RUN_FILTERS.includes(status))
    throw hookdError('INVALID_FIELD', { field: 'status', expected: RUN_FILTERS.join(', ') });
  return { limit: limitOf(query), ...cursorOf(query), ...(status ? { status } : {}) };
}

/** A replay's body: none, or `{ "force": true }` to run anew past its key's remembered answer. */
function replayOptionsOf(body: unknown): { force?: boolean } {
  if (body === undefined || body === null) return {};
  const force = (body as { force?: unknown }).force;
  const keys = typeof body === 'object' && !Array.isArray(body) ? Object.keys(body) : undefined;
  if (!keys?.every((key) => key === 'force') || (force !== undefined && typeof force !== 'boolean'))
    throw hookdError('INVALID_FIELD', { field: 'body', expected: 'nothing, or { "force": true }' });
  return force ? { force } : {};
}

/** `true` or `false`, else 400 `INVALID_FIELD`. */
export function booleanOf(field: string, value: string): boolean {
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw hookdError('INVALID_FIELD', { field, expected: 'true or false' });
}
