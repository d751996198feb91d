import type { FastifyError, FastifyInstance } from 'fastify';
import { errorBody, type HookdError, hookdError, isHookdError } from '../errors.js';
import type { Logger } from '../log.js';

/** Maps what fastify itself may throw onto the catalogue; anything unknown is a 500. */
export function toHookdError(err: unknown): HookdError {
  if (isHookdError(err)) return err;
  const e = err as Partial<FastifyError>;
  switch (e.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return hookdError('UNSUPPORTED_MEDIA_TYPE', 'malformed Content-Type');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return hookdError('PAYLOAD_TOO_LARGE', 'the configured');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return hookdError('INVALID_BODY', 'the body does not match its Content-Length');
    default:
      break;
  }
  if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    return e.statusCode === 404 ? hookdError('NOT_FOUND') : hookdError('INVALID_BODY', 'bad request');
  }
  return hookdError('INTERNAL', '', { cause: err });
}

/** Installs the JSON error and not-found handlers: `{ ok: false, error, code }` everywhere. */
export function installErrorHandlers(app: FastifyInstance, log: Logger): void {
  app.setErrorHandler((err, request, reply) => {
    const e = toHookdError(err);
    if (e.statusCode >= 500) log.error({ err, reqId: request.id }, 'request failed');
    reply.code(e.statusCode).headers(e.headers).send(errorBody(e));
  });
  app.setNotFoundHandler((_request, reply) => {
    reply.code(404).send(errorBody(hookdError('NOT_FOUND')));
  });
}
