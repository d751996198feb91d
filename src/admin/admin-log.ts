import type { FastifyInstance } from 'fastify';
import { hookdError } from '../errors.js';
import type { ActivityFeed, AdminQueries, CancelAnswer } from '../runtime/index.js';
import type { DeliveryOutcome } from '../store/index.js';
import type { ConsoleAuth } from './console-auth.js';
import { registerStream } from './live-stream.js';
import { requestFilter, runFilter } from './log-query.js';
import type { Replayer } from './replay.js';

/** What the request log's admin routes need (docs/runtime.md#request-log-and-replay). */
export interface RequestLogRoutesOptions {
  readonly queries: AdminQueries;
  readonly replay: Replayer;
  readonly redeliver: (runId: string) => Promise<DeliveryOutcome>;
  /** Cancels an unfinished run (docs/runtime.md#cancel). */
  readonly cancel?: (runId: string) => Promise<CancelAnswer>;
  readonly activity: ActivityFeed;
  /** Console sessions: a stream opened with one ends when it signs out or expires. */
  readonly console?: ConsoleAuth;
}

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
  const { cancel } = options;
  if (cancel)
    app.post<{ Params: { runId: string } }>('/api/runs/:runId/cancel', async (request, reply) => {
      const answer = await cancel(request.params.runId);
      // Another node runs it, and ends it at its next lease renewal.
      reply.code(answer.status === 'cancelled' ? 200 : 202);
      return answer;
    });
  registerStream(app, {
    activity: options.activity,
    ...(options.console ? { console: options.console } : {}),
  });
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
