import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import type { ActionOptions, ActionSink } from './actions/index.js';
import type { Config } from './config/index.js';
import { errorBody, hookdError } from './errors.js';
import { adminRoutes, healthRoutes, hookRoutes, installErrorHandlers } from './http/index.js';
import type { Logger } from './log.js';
import type { MappingEngine } from './mapping/index.js';
import type { Metrics } from './metrics.js';
import type { AdminQueries } from './runtime/index.js';

export interface AppDeps {
  readonly config: Config;
  readonly log: Logger;
  readonly sink: ActionSink;
  readonly actionOptions: ActionOptions;
  readonly mappings?: MappingEngine;
  /** Exposed at `GET /metrics` (unauthenticated, DESIGN §8). */
  readonly metrics?: Metrics;
  /** The admin API is mounted when both are given. */
  readonly gatewayToken?: string;
  readonly queries?: AdminQueries;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** A bounded label for a request: never the raw path, which senders choose. */
function endpointOf(url: string, subPath: string | undefined, hooksPath: string): string {
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

/** Builds the HTTP app; never listens (tests inject, `main` listens). */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config, log } = deps;
  const app = Fastify({
    loggerInstance: log.child({ component: 'http' }) as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    trustProxy: trustedProxies(config.server.trustProxy),
    requestIdHeader: false,
    genReqId: (req) => {
      const incoming = req.headers['x-request-id'];
      return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    },
    clientErrorHandler: (err: NodeJS.ErrnoException, socket: Socket) => {
      if (err.code === 'ECONNRESET' || !socket.writable) return socket.destroy();
      const body = JSON.stringify(errorBody(hookdError('INVALID_BODY', { problem: 'malformed-request' })));
      socket.end(
        `HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
    },
  });

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  // The access log is at debug; without it the hook is not even installed (it costs throughput).
  if (log.isLevelEnabled('debug'))
    app.addHook('onResponse', async (request, reply) => {
      request.log.debug(
        {
          reqId: request.id,
          method: request.method,
          path: request.url.split('?')[0],
          status: reply.statusCode,
          ms: Math.round(reply.elapsedTime),
        },
        'request completed',
      );
    });
  const { metrics } = deps;
  if (metrics) {
    const hooksPath = config.hooks.path;
    app.addHook('onResponse', async (request, reply) => {
      metrics.requests.inc({
        endpoint: endpointOf(request.url, request.hook?.subPath, hooksPath),
        status: reply.statusCode,
      });
    });
    app.get('/metrics', async (_request, reply) => {
      reply.header('content-type', metrics.registry.contentType);
      return metrics.registry.metrics();
    });
  }
  installErrorHandlers(app, log);
  await app.register(healthRoutes);
  if (deps.gatewayToken && deps.queries) {
    await app.register(adminRoutes, { gatewayToken: deps.gatewayToken, queries: deps.queries });
  }
  if (config.hooks.enabled && config.hooks.token) {
    await app.register(hookRoutes, {
      hooks: { ...config.hooks, token: config.hooks.token },
      sink: deps.sink,
      actionOptions: deps.actionOptions,
      log,
      ...(deps.mappings ? { mappings: deps.mappings } : {}),
    });
  }
  return app;
}
