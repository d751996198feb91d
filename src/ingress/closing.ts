import type { FastifyInstance } from 'fastify';
import { hookdError } from '../errors.js';

const CLOSING = Symbol('hookd.closing');
declare module 'fastify' {
  interface FastifyInstance {
    [CLOSING]?: boolean;
  }
}

/** 503 `CLOSING` once `app` has begun to close, for every request that comes then. */
export const closingError = (app: FastifyInstance) =>
  app[CLOSING] ? hookdError('CLOSING', undefined, { headers: { 'retry-after': '5' } }) : undefined;

/**
 * Shutting down (docs/operations.md#shutdown): a connection whose response is in flight closes
 * once it is sent, not after its keep-alive (72 s kept `hookd serve` from exiting, past a
 * service manager's grace); a request that comes meanwhile is 503 `CLOSING` in hookd's shape
 * (fastify's own 503 had neither a code nor a request id).
 */
export function closeConnectionsOnClose(app: FastifyInstance): void {
  app.addHook('preClose', (done) => {
    app[CLOSING] = true;
    // Read by node as each response ends: an idle connection closes a millisecond after.
    app.server.keepAliveTimeout = 1;
    done();
  });
}
