import type { FastifyInstance, FastifyRequest } from 'fastify';
import { hookdError } from '../errors.js';
import { type AuthThrottle, createAuthThrottle, createTokenMatcher, findToken } from '../ingress/index.js';
import type { AdminQueries } from '../runtime/index.js';
import { type ConsoleApiOptions, consoleApiRoutes } from './admin-console.js';
import { type RequestLogRoutesOptions, requestLogRoutes } from './admin-log.js';
import { type ConsoleAuth, type ConsoleSession, checkCsrf, checkSameOrigin } from './console-auth.js';
import { booleanOf, cursorOf, limitOf, type Query } from './log-query.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The console session a request came with (null with the bearer token). */
    consoleSession: ConsoleSession | null;
  }
}

export interface AdminRoutesOptions {
  readonly gatewayToken: string;
  readonly queries: AdminQueries;
  /** Admin failures have their own count (docs/security.md#throttling). */
  readonly throttle?: AuthThrottle;
  /** The console's read models and playground (docs/console.md). */
  readonly consoleApi?: Omit<ConsoleApiOptions, 'queries'>;
  /** Console sessions (a signed-in cookie opens the API, docs/console.md). */
  readonly console?: ConsoleAuth;
  /** The request log's routes (replay, runs, redelivery, live stream), when the runtime offers them. */
  readonly log?: Omit<RequestLogRoutesOptions, 'queries'>;
}

/** `GET /api/…`, guarded by `Authorization: Bearer <gateway.auth.token>` (docs/runtime.md#admin-api). */
export async function adminRoutes(app: FastifyInstance, options: AdminRoutesOptions): Promise<void> {
  const matches = createTokenMatcher(options.gatewayToken);
  const throttle = options.throttle ?? createAuthThrottle();
  app.decorateRequest('consoleSession', null);
  app.addHook('onRequest', async (request: FastifyRequest) => {
    const presented = findToken(request.headers, undefined);
    // A locked address is refused whatever token it sends, the right one too: were the right
    // one let through, every answer but 429 would tell a guesser it had found it.
    const locked = throttle.lockedForSeconds(request.ip);
    if (presented && locked > 0) throw tooManyFailures(locked);
    if (presented?.source === 'bearer' && matches(presented.token)) return;
    // The console's session cookie opens the API too; what changes state also needs its CSRF token.
    const session = await options.console?.sessionOf(request);
    if (session) {
      // Reads too: a sibling site's page (same site, so the Strict cookie goes along) may not
      // hold live streams open or read the log through the operator's browser.
      checkSameOrigin(request);
      request.consoleSession = session;
      if (request.method !== 'GET' && request.method !== 'HEAD') {
        const header = request.headers['x-csrf-token'];
        checkCsrf(request, session, typeof header === 'string' ? header : undefined);
      }
      return;
    }
    if (locked > 0) throw tooManyFailures(locked);
    // Only a wrong token is a guess: any web page can make the operator's browser send requests
    // without one (an image, a link), and those must not lock the operator out of signing in.
    if (presented) throttle.fail(request.ip);
    throw hookdError('ADMIN_UNAUTHORIZED');
  });
  const { queries } = options;
  // The run with its mapping and its times, as lists show it (`hookd runs <id>`'s timeline).
  app.get<{ Params: { runId: string } }>('/api/runs/:runId', async (request) => {
    const run = await queries.runItem(request.params.runId);
    if (!run) throw hookdError('NOT_FOUND', { resource: 'run', id: request.params.runId });
    return run;
  });
  app.get('/api/main/events', async (request) => queries.mainEvents(windowOf(request.query as Query)));
  app.get('/api/alerts', async (request) => {
    const query = request.query as Record<string, string | undefined>;
    const open = query.open === undefined ? {} : { open: booleanOf('open', query.open) };
    return queries.alerts({ limit: limitOf(query), ...cursorOf(query), ...open });
  });
  app.get('/api/mail/status', async () => {
    const status = queries.mailStatus?.();
    if (!status)
      throw hookdError('NOT_FOUND', { resource: 'mail watcher', hint: 'hooks.mail.watch is not running here' });
    return status;
  });
  app.get<{ Params: { key: string } }>('/api/sessions/:key', async (request) => {
    const session = await queries.session(request.params.key, windowOf(request.query as Query));
    if (!session) throw hookdError('NOT_FOUND', { resource: 'session', id: request.params.key });
    return session;
  });
  if (options.log)
    requestLogRoutes(app, { ...options.log, queries, ...(options.console ? { console: options.console } : {}) });
  if (options.consoleApi) consoleApiRoutes(app, { ...options.consoleApi, queries });
}

/**
 * How many of a session's messages or main events a page lists, newest: `limit` (1 to 500),
 * 200 when not given. They are never pruned; a page of them all grows with the gateway's age.
 */
const windowOf = (query: Query): number => (query.limit === undefined ? 200 : limitOf(query));

/** The 429 of an address locked for `seconds` more (docs/security.md#throttling). */
const tooManyFailures = (seconds: number) =>
  hookdError('TOO_MANY_AUTH_FAILURES', undefined, { headers: { 'retry-after': String(seconds) } });
