import type { FastifyError, FastifyInstance } from 'fastify';
import { errorBody, type HookdError, hasStatus, hookdError, isHookdError } from '../errors.js';
import type { Logger } from '../log.js';

/**
 * The error to answer with: a catalogue error with a status as it is; what fastify itself may
 * throw mapped onto the catalogue; anything else (a catalogue error that never answers a
 * request included) is a generic 500.
 */
export function toHookdError(err: unknown): HookdError {
  if (isHookdError(err) && hasStatus(err.code)) return err;
  const e = err as Partial<FastifyError>;
  switch (e.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return hookdError('UNSUPPORTED_MEDIA_TYPE', { contentType: '(malformed)' });
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return hookdError('PAYLOAD_TOO_LARGE', {});
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return hookdError('INVALID_BODY', { problem: 'length-mismatch' });
    default:
      break;
  }
  if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    return e.statusCode === 404 ? hookdError('NOT_FOUND') : hookdError('INVALID_BODY', { problem: 'bad-request' });
  }
  return hookdError('INTERNAL', undefined, { cause: err });
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
