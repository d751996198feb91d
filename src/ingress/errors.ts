import type { FastifyError, FastifyInstance } from 'fastify';
import { errorBody, type HookdError, hasStatus, hookdError, isHookdError } from '../errors.js';
import type { Logger } from '../log.js';
import { createLogWindow } from '../log-window.js';
import { acceptError, causeOf, isStoreUnavailable } from '../store/index.js';

/**
 * The error to answer with: a catalogue error with a status as it is; what fastify itself may
 * throw mapped onto the catalogue; a store out of reach (an admin read while PostgreSQL is down)
 * 503 `STORE_UNAVAILABLE`, not a 500 logged with its stack at every poll of the console; anything
 * else (a catalogue error that never answers a request included) is a generic 500.
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
  if (isStoreUnavailable(err)) return acceptError(err) as HookdError;
  if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    return e.statusCode === 404 ? hookdError('NOT_FOUND') : hookdError('INVALID_BODY', { problem: 'bad-request' });
  }
  return hookdError('INTERNAL', undefined, { cause: err });
}

/** The 5xx a sender can cause at will, and a store out of reach: logged without a stack, once per interval. */
const REPEATABLE_5XX: ReadonlySet<string> = new Set([
  'QUEUE_FULL',
  'TRANSFORM_BUSY',
  'TRANSFORM_FAILED',
  'STORE_UNAVAILABLE',
  'COMMIT_UNCONFIRMED',
]);

interface Line {
  readonly level: 'warn' | 'error';
  readonly msg: string;
  readonly fields: Readonly<Record<string, unknown>>;
}

/**
 * The line of a refusal that repeats, and the key its repeats are counted under: a failed
 * transform per mapping, with its message and the author's `file:line:column`; the others per code.
 */
function refusalLine(e: HookdError, reqId: string): { key: string; line: Line } {
  if (isHookdError(e, 'TRANSFORM_FAILED')) {
    const { mapping, location: at } = e.params;
    const fields = {
      code: e.code,
      mapping,
      reqId,
      error: e.message,
      ...(at ? { at: `${at.file}:${at.line}:${at.column}` } : {}),
    };
    return { key: `${e.code} ${mapping ?? ''}`, line: { level: 'warn', msg: 'transform failed', fields } };
  }
  if (e.code === 'STORE_UNAVAILABLE' || e.code === 'COMMIT_UNCONFIRMED') {
    // A full disk or a database out of reach answers every request alike.
    const cause = e.cause === undefined ? undefined : causeOf(e.cause);
    return { key: e.code, line: { level: 'error', msg: 'request refused', fields: { code: e.code, cause, reqId } } };
  }
  return { key: e.code, line: { level: 'warn', msg: 'request refused', fields: { code: e.code, reqId } } };
}

/** Installs the JSON error and not-found handlers: `{ ok: false, error, code }` everywhere. */
export function installErrorHandlers(app: FastifyInstance, log: Logger, options: { logEveryMs?: number } = {}): void {
  const intervalMs = options.logEveryMs ?? 10_000;
  // A flood of one refusal is one line per interval, its repeats counted (never dropped unsaid).
  const repeats = createLogWindow<Line>(intervalMs, ({ level, msg, fields }, suppressed) =>
    log[level](suppressed > 0 ? { ...fields, suppressed, intervalMs } : fields, msg),
  );
  app.addHook('onClose', (_instance, done) => {
    repeats.flush();
    done();
  });
  app.setErrorHandler((err, request, reply) => {
    // A body cut short (the client went away, or its time ran out) is the sender's doing: a
    // 400 nobody may read, not a 500 logged with a stack.
    const cutShort = (err as NodeJS.ErrnoException).code === 'ECONNRESET' && !request.raw.complete;
    const e = cutShort ? hookdError('INVALID_BODY', { problem: 'length-mismatch' }) : toHookdError(err);
    if (REPEATABLE_5XX.has(e.code)) {
      const { key, line } = refusalLine(e, request.id);
      repeats.report(key, line);
    } else if (e.statusCode >= 500) log.error({ err, reqId: request.id }, 'request failed');
    reply.code(e.statusCode).headers(e.headers).send(errorBody(e));
  });
  app.setNotFoundHandler((_request, reply) => {
    reply.code(404).send(errorBody(hookdError('NOT_FOUND')));
  });
}
