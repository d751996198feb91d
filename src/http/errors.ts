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

/** The 5xx a sender can cause at will: logged at warn, at most one line per code per interval. */
const EXPECTED_5XX: ReadonlySet<string> = new Set(['QUEUE_FULL', 'TRANSFORM_BUSY', 'TRANSFORM_FAILED']);

/**
 * One log line per key per `intervalMs`; `allow` answers how many were held back since the
 * last line it allowed, or undefined to hold this one back too.
 */
export function createLogLimiter(intervalMs: number, now: () => number = Date.now) {
  const last = new Map<string, { at: number; held: number }>();
  return {
    allow(key: string): number | undefined {
      const seen = last.get(key);
      const at = now();
      if (seen && at - seen.at < intervalMs) {
        seen.held++;
        return undefined;
      }
      last.set(key, { at, held: 0 });
      return seen?.held ?? 0;
    },
  };
}

/** Installs the JSON error and not-found handlers: `{ ok: false, error, code }` everywhere. */
export function installErrorHandlers(app: FastifyInstance, log: Logger, options: { logEveryMs?: number } = {}): void {
  const limiter = createLogLimiter(options.logEveryMs ?? 10_000);
  app.setErrorHandler((err, request, reply) => {
    // A body cut short (the client went away, or its time ran out) is the sender's doing: a
    // 400 nobody may read, not a 500 logged with a stack.
    const cutShort = (err as NodeJS.ErrnoException).code === 'ECONNRESET' && !request.raw.complete;
    const e = cutShort ? hookdError('INVALID_BODY', { problem: 'length-mismatch' }) : toHookdError(err);
    if (EXPECTED_5XX.has(e.code)) {
      // A full queue or a failing transform, answered to every sender: no stack, no flood.
      const held = limiter.allow(e.code);
      if (held !== undefined) log.warn({ code: e.code, reqId: request.id, alsoSince: held }, 'request refused');
    } else if (e.code === 'STORE_UNAVAILABLE') {
      // A full disk or a database out of reach answers every request alike: one line per interval.
      const held = limiter.allow(e.code);
      const cause = (e.cause as Error | undefined)?.message;
      if (held !== undefined) log.error({ code: e.code, cause, reqId: request.id, alsoSince: held }, 'request refused');
    } else if (e.statusCode >= 500) log.error({ err, reqId: request.id }, 'request failed');
    reply.code(e.statusCode).headers(e.headers).send(errorBody(e));
  });
  app.setNotFoundHandler((_request, reply) => {
    reply.code(404).send(errorBody(hookdError('NOT_FOUND')));
  });
}
