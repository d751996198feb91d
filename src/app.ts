import type { IncomingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type HookHandlerDoneFunction,
  LogController,
} from 'fastify';
import type { ActionOptions, ActionSink } from './actions/index.js';
import {
  adminRoutes,
  type ConsoleSessions,
  consoleRoutes,
  createConsoleAuth,
  createReplayer,
  healthRoutes,
  hostGuardOf,
} from './admin/index.js';
import type { Clock } from './clock.js';
import type { Config } from './config/index.js';
import { errorBody, hookdError } from './errors.js';
import { newId } from './ids.js';
import {
  answerMalformed,
  answerOutsideFastify,
  type CredentialFingerprints,
  closeConnectionsOnClose,
  closingError,
  createAuthThrottle,
  createCredentialFingerprints,
  createHookActions,
  createInFlightKeys,
  createRequestRecorder,
  hookRoutes,
  type InFlightKeys,
  installErrorHandlers,
  limitConnectionsPerClient,
  requestLogSettings,
  toHookdError,
} from './ingress/index.js';
import { LazyChildLogger, type Logger } from './log.js';
import type { MappingEngine } from './mapping/index.js';
import type { Metrics } from './metrics.js';
import type { AdminQueries, HookOutcomes, Runtime } from './runtime/index.js';

export interface AppDeps {
  readonly config: Config;
  readonly log: Logger;
  readonly sink: ActionSink;
  readonly actionOptions: ActionOptions;
  readonly mappings?: MappingEngine;
  /** Exposed at `GET /metrics` (unauthenticated, docs/operations.md#health-and-observability). */
  readonly metrics?: Metrics;
  /** The admin API is mounted when both are given. */
  readonly gatewayToken?: string;
  readonly queries?: AdminQueries;
  /** The request log's live feed and redelivery (the runtime's); replay is built here. */
  readonly operator?: Pick<Runtime, 'activity' | 'redeliver' | 'cancel' | 'queueDepth' | 'breakers'>;
  /** Where console sessions are kept; the console at /ui/ is served when given (with the admin API). */
  readonly consoleSessions?: ConsoleSessions;
  /** Requests' arrival times and the refused requests' minutes in the request log (default: the system clock). */
  readonly clock?: Clock;
  /** Told how hook requests were answered, for alerts (the runtime's, while alerts are on). */
  readonly outcomes?: HookOutcomes;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/** A NUL in a URL, percent-encoded (node's parser refuses a raw one). */
const NUL_IN_URL = /%00/;

/** A bounded label for a request: never the raw path, which senders choose. */
export function endpointOf(url: string, subPath: string | undefined, hooksPath: string): string {
  if (subPath === 'wake' || subPath === 'agent') return subPath;
  if (subPath !== undefined) return 'mapped';
  if (url.startsWith('/api/')) return 'admin';
  if (url === '/healthz' || url === '/metrics') return 'health';
  return url.startsWith(hooksPath) ? 'hooks' : 'other';
}

/**
 * `server.trustProxy` for fastify: the client is the address the last trusted proxy saw,
 * never a left-most X-Forwarded-For entry a client can write. `true` means one proxy hop
 * (fastify's own `true` trusts every hop); a number, that many hops; a list, those addresses.
 */
function trustedProxies(
  setting: Config['server']['trustProxy'],
): boolean | string[] | ((address: string, hop: number) => boolean) {
  if (setting === false) return false;
  if (Array.isArray(setting)) return [...setting];
  const hops = setting === true ? 1 : (setting as number);
  return (_address, hop) => hop < hops;
}

/**
 * The compilers of route schemas, which hookd's routes do not have: fastify's own (ajv and its
 * serializer, about 25 ms to load) are never loaded. A route that declared one fails at start.
 */
const noRouteSchemas = () => () => {
  throw hookdError('INTERNAL', undefined, {
    cause: 'hookd routes declare no JSON schemas (see the schemaController option in src/app.ts)',
  });
};

/** The request's id: the sender's `x-request-id` when it is a safe one, else a new one. */
export function requestIdOf(req: { readonly headers: IncomingHttpHeaders }): string {
  const incoming = req.headers['x-request-id'];
  // Time-ordered: the request log's id index appends instead of touching a random page per row.
  return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : newId();
}

/** Errors fastify meets before routing (a malformed URL) answer like the rest: JSON, a code, an id. */
function answerFrameworkError(err: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const e = err.code === 'FST_ERR_BAD_URL' ? hookdError('BAD_URL') : toHookdError(err);
  reply.header('x-request-id', request.id).code(e.statusCode).send(errorBody(e));
}

/** Fastify with the server's bounds, request ids and error answers; no hooks or routes yet. */
function createFastify(config: Config, log: Logger): FastifyInstance {
  return Fastify({
    loggerInstance: log.child({ component: 'http' }) as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    trustProxy: trustedProxies(config.server.trustProxy),
    // A request's headers, and the whole request, arrive within bounds (then 408, closed);
    // node checks every second instead of its default 30.
    requestTimeout: config.server.requestTimeoutMs,
    http: {
      headersTimeout: config.server.headersTimeoutMs,
      requestTimeout: config.server.requestTimeoutMs,
      connectionsCheckingInterval: 1000,
    },
    requestIdHeader: false,
    return503OnClosing: false, // tagRequest answers 503 CLOSING, in hookd's shape
    // A path parameter as long as the ids hookd takes: a sender's request id (128 characters), a
    // session key (256, up to 12 characters each percent-encoded). Fastify's default is 100.
    routerOptions: { maxParamLength: 3072 },
    // A request's logger is made when something logs through it (most requests log nothing).
    childLoggerFactory: (logger, bindings) => new LazyChildLogger(logger as Logger, bindings) as FastifyBaseLogger,
    genReqId: requestIdOf,
    frameworkErrors: answerFrameworkError,
    clientErrorHandler: answerMalformed,
    // No route declares a JSON schema (hookd parses and validates bodies itself), so fastify's
    // default compilers, ajv and fast-json-stringify (about 25 ms to load at start), are never
    // loaded; a route that declared one would fail to register, saying so.
    schemaController: { compilersFactory: { buildValidator: noRouteSchemas, buildSerializer: noRouteSchemas } },
  });
}

/**
 * Every answer names its request's id; no route takes a NUL in its URL. A callback hook: an
 * async one costs a promise and a microtask turn per request.
 */
function tagRequest(request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void {
  reply.header('x-request-id', request.id);
  // No route takes a NUL: PostgreSQL's text cannot hold one (a 500 there, a 404 on SQLite).
  const nul = NUL_IN_URL.test(request.url) ? hookdError('BAD_URL', { why: 'nul' }) : undefined;
  done(closingError(request.server) ?? nul);
}

/** The access log line (at debug). */
async function logCompleted(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  // request.log is bound to the request's id already (reqId): not repeated here.
  request.log.debug(
    {
      method: request.method,
      path: request.url.split('?')[0],
      status: reply.statusCode,
      ms: Math.round(reply.elapsedTime),
    },
    'request completed',
  );
}

/** Counts every answer by endpoint and status (a callback hook); `GET /metrics` is served on the operator's side. */
function installMetrics(app: FastifyInstance, metrics: Metrics, hooksPath: string): void {
  app.addHook('onResponse', (request, reply, done) => {
    metrics.countRequest(endpointOf(request.url, request.hook?.subPath, hooksPath), reply.statusCode);
    done();
  });
}

/**
 * What an operator reaches (`/healthz`, `/metrics`, the admin API, the console), in a scope of
 * its own: on a gateway bound to loopback it answers loopback names and `server.allowedHosts`
 * only (docs/security.md#dns-rebinding). Hook requests never pass the check.
 */
async function registerOperatorSide(app: FastifyInstance, deps: AppDeps, shared: SharedHookState): Promise<void> {
  const { config, metrics } = deps;
  const guard = hostGuardOf(config.server.host, config.server.allowedHosts);
  await app.register(async (side) => {
    // What the operator's side answers, refusals included: no cache keeps it, no browser reads it as a page.
    side.addHook('onRequest', (_request, reply, done) => {
      reply.header('cache-control', 'no-store').header('x-content-type-options', 'nosniff');
      done();
    });
    if (guard) side.addHook('onRequest', guard);
    if (metrics)
      side.get('/metrics', async (_request, reply) => {
        reply.header('content-type', metrics.registry.contentType);
        return metrics.registry.metrics();
      });
    await side.register(healthRoutes, deps.operator ? { breakers: deps.operator.breakers } : {});
    if (deps.gatewayToken && deps.queries)
      await registerOperatorRoutes(side, deps, { gatewayToken: deps.gatewayToken, queries: deps.queries, ...shared });
  });
}

/** What hook requests and their replays share: the credentials' fingerprints, the keys in flight. */
interface SharedHookState {
  readonly fingerprints: CredentialFingerprints;
  readonly inFlight: InFlightKeys;
}

/** Builds the HTTP app; never listens (tests inject, `main` listens). */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config, log } = deps;
  const app = createFastify(config, log);
  app.addHook('onRequest', tagRequest);
  closeConnectionsOnClose(app);
  answerOutsideFastify(app.server);
  // Connections past the bound are refused at accept, before they cost anything else; so are
  // one client's past its share (behind a proxy, the proxy is the only client a socket shows).
  app.server.maxConnections = config.server.maxConnections;
  if (config.server.trustProxy === false)
    limitConnectionsPerClient(app.server, config.server.maxConnectionsPerClient, log);
  // The access log is at debug; without it the hook is not even installed (it costs throughput).
  if (log.isLevelEnabled('debug')) app.addHook('onResponse', logCompleted);
  if (deps.metrics) installMetrics(app, deps.metrics, config.hooks.path);
  installErrorHandlers(app, log);
  // What hook requests and their replays share: the credentials' fingerprints, the keys in flight.
  const shared: SharedHookState = {
    fingerprints: createCredentialFingerprints(deps.gatewayToken, config.hooks.token ?? ''),
    inFlight: createInFlightKeys(),
  };
  await registerOperatorSide(app, deps, shared);
  if (config.hooks.enabled && config.hooks.token) {
    await app.register(hookRoutes, {
      hooks: { ...config.hooks, token: config.hooks.token },
      sink: deps.sink,
      actionOptions: deps.actionOptions,
      log,
      ...(deps.mappings ? { mappings: deps.mappings } : {}),
      ...(deps.clock ? { clock: deps.clock } : {}),
      ...(deps.outcomes ? { outcomes: deps.outcomes } : {}),
      ...shared,
    });
  }
  return app;
}

/**
 * The admin API (docs/runtime.md#admin-api), the request log and replay, the console's API and the console
 * itself (docs/runtime.md#request-log-and-replay): everything the gateway token opens.
 */
async function registerOperatorRoutes(
  app: FastifyInstance,
  deps: AppDeps,
  operatorDeps: SharedHookState & { gatewayToken: string; queries: AdminQueries },
): Promise<void> {
  const { config, operator, metrics, consoleSessions } = deps;
  const { gatewayToken, queries, fingerprints, inFlight } = operatorDeps;
  const requestLog = operator && {
    activity: operator.activity,
    redeliver: operator.redeliver,
    cancel: operator.cancel,
    replay: createReplayer({
      sink: deps.sink,
      requested: createHookActions({ ...deps, redact: config.hooks.log.redact }),
      recorder: createRequestRecorder(requestLogSettings(config.hooks)),
      fingerprints,
      inFlight,
      allowQueryToken: config.hooks.allowQueryToken,
      ...(deps.mappings ? { mappings: deps.mappings } : {}),
      ...(deps.outcomes ? { outcomes: deps.outcomes } : {}),
      ...(deps.clock ? { now: deps.clock.now } : {}),
    }),
  };
  const consoleApi = {
    hooksPath: config.hooks.path,
    fixturesDir: join(config.hooks.transformsDir, 'fixtures'),
    actionOptions: deps.actionOptions,
    ...(deps.mappings ? { mappings: deps.mappings } : {}),
    ...(operator ? { queueDepth: () => operator.queueDepth, breakers: operator.breakers } : {}),
    ...(metrics ? { transformLatency: () => metrics.transformLatency() } : {}),
  };
  // The gateway token guards the API and the console's sign-in: one count of failures.
  const throttle = createAuthThrottle();
  const consoleAuth = consoleSessions && createConsoleAuth(consoleSessions, gatewayToken);
  await app.register(adminRoutes, {
    gatewayToken,
    queries,
    throttle,
    consoleApi,
    ...(requestLog ? { log: requestLog } : {}),
    ...(consoleAuth ? { console: consoleAuth } : {}),
  });
  if (consoleAuth) await app.register(consoleRoutes, { gatewayToken, auth: consoleAuth, throttle, log: deps.log });
}
