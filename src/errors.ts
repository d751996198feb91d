/**
 * The one catalogue of coded errors (fastify's `lib/errors.js`, undici's `core/errors.js`).
 * Every error hookd raises is an entry here: a stable code, an HTTP status where it has one,
 * and a message template that owns its words (callers pass values, never sentences).
 * Callers match on `code`, never on message text. 4xx messages are safe to show to the
 * sender; 5xx messages are generic unless the entry is `exposed` (TRANSFORM_FAILED carries
 * the transform's own message).
 */

import {
  capped,
  configProblems,
  INVALID_BODY_WORDS,
  MAX_ERROR_CHARS,
  MODEL_ANSWER_WORDS,
  REPLAY_REFUSAL_WORDS,
  type ReplayRefusal,
  siteOf,
  type TransformFailure,
  type TransformFailureSite,
} from './error-words.js';

export type { ReplayRefusal, TransformFailure, TransformFailureSite } from './error-words.js';

interface ErrorSpec {
  /** The HTTP status when the error answers a request; absent for errors that never do. */
  readonly status?: number;
  /** True when a 5xx answer may show the message (it holds nothing from the host). */
  readonly exposed?: boolean;
  // biome-ignore lint/suspicious/noExplicitAny: each entry declares its own parameter type
  readonly message: (params: any) => string;
  /** A stable word for programs, answered beside the message as `reason` (4xx only). */
  // biome-ignore lint/suspicious/noExplicitAny: each entry declares its own parameter type
  readonly reason?: (params: any) => string;
}

const http = <P = void>(status: number, message: (params: P) => string) => ({ status, message });
/** An answer whose 5xx message is shown (`exposed`). */
const shown = <P = void>(status: number, message: (params: P) => string) => ({ status, message, exposed: true });
const local = <P = void>(message: (params: P) => string) => ({ message });

export const errorCatalogue = {
  // Answers to hook and admin requests (docs/errors.md, first table).
  NOT_FOUND: http(404, (p: { resource: string; id?: string; hint?: string } | undefined) =>
    p ? `no ${p.resource}${p.id === undefined ? '' : ` ${p.id}`}${p.hint ? ` (${p.hint})` : ''}` : 'not found',
  ),
  NO_MAPPING: http(404, (p: { hook: string }) => `no mapping for hook: ${p.hook}`),
  METHOD_NOT_ALLOWED: http(405, () => 'method not allowed; use POST'),
  UNAUTHORIZED: http(401, () => 'missing or invalid hook token'),
  SIGNATURE_INVALID: http(401, (p: { reason: string }) => `invalid webhook signature: ${p.reason}`),
  ADMIN_UNAUTHORIZED: http(401, () => 'missing or invalid gateway token'),
  CSRF_REFUSED: http(403, (p: { why: 'cross-site' | 'token' }) =>
    p.why === 'cross-site'
      ? 'refused: a console action from another site'
      : 'refused: a console action without its CSRF token (reload the page)',
  ),
  TOO_MANY_AUTH_FAILURES: http(429, () => 'too many failed authentication attempts; retry later'),
  HOST_NOT_ALLOWED: http(421, (p: { host: string }) => `${p.host} is no name of this gateway: see server.allowedHosts`),
  QUERY_TOKEN_DISABLED: http(400, () => 'the ?token= query parameter is disabled; send Authorization: Bearer <token>'),
  UNSUPPORTED_MEDIA_TYPE: http(415, (p: { contentType: string }) => `unsupported content type: ${p.contentType}`),
  PAYLOAD_TOO_LARGE: http(413, (p: { limitBytes?: number }) =>
    p.limitBytes === undefined ? 'payload too large' : `payload too large: the limit is ${p.limitBytes} bytes`,
  ),
  REQUEST_TIMEOUT: http(408, () => 'the request took too long to arrive; the connection is closed'),
  BAD_URL: http(400, (p: { why: 'encoding' | 'nul' } | undefined) =>
    p?.why === 'nul' ? 'malformed URL (a NUL character, %00)' : 'malformed URL (a bad percent-encoding)',
  ),
  EXPECTATION_FAILED: http(417, (p: { expect: string }) => `unsupported Expect header: ${p.expect}`),
  INVALID_JSON: http(400, (p: { reason: string }) => `invalid JSON body: ${p.reason}`),
  INVALID_BODY: http(400, (p: { problem: keyof typeof INVALID_BODY_WORDS }) => INVALID_BODY_WORDS[p.problem]),
  INVALID_FIELD: http(400, (p: { field: string; expected: string }) => `${p.field}: expected ${p.expected}`),
  PAYLOAD_INVALID: http(
    400,
    (p: { pointer: string; problem: string }) =>
      `the payload does not match the mapping's schema${p.pointer ? ` at ${p.pointer}` : ''}: ${p.problem}`,
  ),
  TEXT_REQUIRED: http(400, () => 'text required'),
  MESSAGE_REQUIRED: http(400, () => 'message required'),
  MODEL_NOT_ALLOWED: http(400, (p: { ref: string }) => `model not allowed: ${p.ref}`),
  UNKNOWN_PROVIDER: http(400, (p: { provider: string }) => `unknown model provider: ${p.provider}`),
  TOO_MANY_ACTIONS: http(
    400,
    (p: { count: number; max: number }) => `a mapping may yield at most ${p.max} actions; got ${p.count}`,
  ),
  IDEMPOTENCY_CONFLICT: http(409, (p: { of?: 'delivery id' } | undefined) =>
    p?.of === 'delivery id'
      ? 'this delivery id was already received with a different body (each message needs its own id)'
      : 'this Idempotency-Key was used with a different body',
  ),
  IDEMPOTENCY_IN_FLIGHT: http(409, () => 'a request with this Idempotency-Key is still being processed; retry later'),
  NOT_REDELIVERABLE: http(
    409,
    (p: { runId: string; delivery: string }) =>
      `run ${p.runId} cannot be redelivered: its delivery is ${p.delivery}, not failed`,
  ),
  REDELIVERY_IN_FLIGHT: http(409, (p: { runId: string }) => `run ${p.runId} is being redelivered already`),
  RUN_FINISHED: http(
    409,
    (p: { runId: string; status: string }) => `run ${p.runId} has finished (${p.status}): there is nothing to cancel`,
  ),
  REPLAY_MAPPING_GONE: http(
    409,
    (p: { requestId: string; mappingId: string }) =>
      `request ${p.requestId} was taken by mapping ${p.mappingId}, which no longer exists`,
  ),
  REPLAY_NOT_ALLOWED: {
    ...http(
      409,
      (p: { requestId: string; refusal: ReplayRefusal }) =>
        `request ${p.requestId} cannot be replayed: ${REPLAY_REFUSAL_WORDS[p.refusal.why](p.refusal)}`,
    ),
    reason: (p: { refusal: ReplayRefusal }) => p.refusal.why,
  },
  STREAMS_FULL: http(503, (p: { max: number }) => `too many live streams are open (at most ${p.max}); retry later`),
  QUEUE_FULL: http(503, () => 'the run queue is full; retry later'),
  // Shown: a sender retries it (another node, or this one once it is back).
  CLOSING: shown(503, () => 'the gateway is shutting down; nothing was accepted; retry shortly'),
  BUSY: shown(
    503,
    (p: { bound: 'client' | 'bytes' }) =>
      `too many request bodies${p.bound === 'client' ? ' from this address' : ''} are waiting for their signature check; retry later`,
  ),
  STORE_UNAVAILABLE: http(503, () => 'the store cannot take writes right now; nothing was accepted; retry later'),
  // Shown: it tells the sender how to retry without doubling what may have been accepted.
  COMMIT_UNCONFIRMED: shown(
    503,
    () =>
      'the store did not confirm the commit in time: it may have been accepted; retry with the same Idempotency-Key',
  ),
  TRANSFORM_BUSY: shown(
    503,
    (p: { mapping: string; running: number; limit: string }) =>
      `the transform of mapping ${p.mapping} did not start: ${p.running} calls already run (${p.limit}); retry later`,
  ),
  TRANSFORM_FAILED: shown(500, (p: TransformFailure) => `transform failed: ${siteOf(p)}${capped(p.reason)}`),
  INTERNAL: http(500, () => 'internal error'),

  // Start-up, CLI and runtime errors that never answer a hook request (docs/errors.md, second table).
  CONFIG_INVALID: local(configProblems),
  /** One problem in one part of a configuration, gathered with the others into CONFIG_INVALID. */
  CONFIG_PROBLEM: local((p: { problem: string }) => p.problem),
  CONFIG_EDIT_FAILED: local(
    (p: { problem: string; offset?: number }) =>
      `cannot edit the config file: ${p.problem}${p.offset === undefined ? '' : ` at offset ${p.offset}`}`,
  ),
  CLI_USAGE: local(
    (p: { option: string; expected: string; got: string }) =>
      `${p.option} expects ${p.expected}, got ${JSON.stringify(p.got)}`,
  ),
  INIT_WOULD_OVERWRITE: local(
    (p: { dir: string; files: readonly string[] }) =>
      `${p.dir} already has ${p.files.join(', ')}; nothing was written (--force overwrites them)`,
  ),
  INIT_ENV_REFUSED: local(
    (p: { file: string; reason: string }) =>
      `${p.file} ${p.reason}; hookd writes the hook token only into a regular file of yours, so nothing was written (remove it, or add HOOKD_HOOK_TOKEN to the file it stands for yourself)`,
  ),
  SECRET_UNREADABLE: local((p: { file: string; problem: string }) => `${p.file} ${p.problem}`),
  STORE_SCHEMA_TOO_NEW: local(
    (p: { found: number; known: number }) =>
      `the database was written by a newer hookd (schema ${p.found}, this one knows ${p.known})`,
  ),
  TRANSFORM_COMPILE_FAILED: local((p: { problems: readonly string[] }) => p.problems.join('\n')),
  TRANSFORM_LOAD_FAILED: local(
    (p: { reason: string } & TransformFailureSite) => `failed while loading: ${siteOf(p)}${p.reason}`,
  ),
  TRANSFORM_EXPORT_MISSING: local((p: { exportName?: string }) =>
    p.exportName
      ? `the module exports no function named ${p.exportName}`
      : 'the module exports no default or transform function',
  ),
  MODEL_UNKNOWN: local(
    (p: { provider: string; model: string; suggestion: string }) =>
      `${p.provider} has no model ${JSON.stringify(p.model)} (try ${p.suggestion})`,
  ),
  MODEL_REFUSED: local(
    (p: { status: number; excerpt: string; retryAfterMs?: number }) =>
      `the model server answered ${p.status}: ${p.excerpt}`,
  ),
  MODEL_UNREACHABLE: local((p: { reason: string }) => `the model server is unreachable: ${p.reason}`),
  MODEL_CONTEXT_EXCEEDED: local(
    (p: { status: number; excerpt: string; sentChars?: number }) =>
      `the model server refused the request as too long for its context (HTTP ${p.status}${
        p.sentChars === undefined ? '' : `, ${p.sentChars} characters sent`
      }): ${p.excerpt}`,
  ),
  MODEL_INVALID_ANSWER: local((p: { problem: keyof typeof MODEL_ANSWER_WORDS }) => MODEL_ANSWER_WORDS[p.problem]),
  MODEL_UNAVAILABLE: local(
    (p: { attempts: number; last: string }) =>
      `the model server failed ${p.attempts} time${p.attempts === 1 ? '' : 's'}, last: ${p.last}`,
  ),
  RUN_TIMED_OUT: local(
    (p: { seconds: number; unavailable?: string }) =>
      `timed out after ${p.seconds}s${p.unavailable ? ` (${p.unavailable})` : ''}`,
  ),
  RUN_CANCELLED: local(() => 'cancelled by the operator'),
  CHANNEL_REFUSED: local(
    (p: {
      channel: string;
      status: number;
      description?: string;
      retryAfterMs?: number;
      transient?: boolean;
      /** Whose status `status` is, when it is not HTTP's (`SMTP`). */
      protocol?: string;
    }) =>
      `${p.channel} answered ${p.protocol ? `${p.protocol} ` : ''}${p.status}${p.description ? `: ${p.description}` : ''}`,
  ),
  CHANNEL_UNCONFIRMED: local(
    (p: { channel: string; excerpt: string }) => `${p.channel} did not confirm the message (${p.excerpt})`,
  ),
  CHANNEL_UNREACHABLE: local((p: { channel: string; reason: string }) => `${p.channel} unreachable: ${p.reason}`),
  DELIVERY_GAVE_UP: local((p: { reason: string; attempts: number }) => `${p.reason} (after ${p.attempts} attempts)`),
  MAIL_SERVER_UNUSABLE: local((p: { problem: string }) => `the IMAP server's answer cannot be used: ${p.problem}`),
  SHUTTING_DOWN: local((p: { what: string } | undefined) => (p ? `${p.what} aborted: shutting down` : 'shutting down')),
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof errorCatalogue;
/** The values an entry's message template takes (`undefined` for a fixed message). */
export type ErrorParams<C extends ErrorCode> = Parameters<(typeof errorCatalogue)[C]['message']>[0];

export interface HookdErrorOptions {
  readonly cause?: unknown;
  /** Extra response headers (e.g. Allow, Retry-After). */
  readonly headers?: Record<string, string>;
}

/** The arguments after the code: the template's values (omitted when it takes none), then options. */
export type ErrorArgs<C extends ErrorCode> =
  undefined extends ErrorParams<C>
    ? [params?: ErrorParams<C>, options?: HookdErrorOptions]
    : [params: ErrorParams<C>, options?: HookdErrorOptions];

/** An error with a stable code (and an HTTP status where it has one) from the catalogue. */
export class HookdError<C extends ErrorCode = ErrorCode> extends Error {
  readonly code: C;
  /** The HTTP status; 500 for entries that never answer a request but reach one anyway. */
  readonly statusCode: number;
  /** The values the message was made from (e.g. `problems` of CONFIG_INVALID). */
  readonly params: ErrorParams<C>;
  readonly headers: Readonly<Record<string, string>>;

  constructor(code: C, ...[params, options = {}]: ErrorArgs<C>) {
    const entry: ErrorSpec = errorCatalogue[code];
    super(entry.message(params), options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'HookdError';
    this.code = code;
    this.statusCode = entry.status ?? 500;
    this.params = params as ErrorParams<C>;
    this.headers = options.headers ?? {};
  }
}

/**
 * Creates a coded error.
 * @example throw hookdError('MODEL_NOT_ALLOWED', { ref })
 */
export function hookdError<C extends ErrorCode>(code: C, ...args: ErrorArgs<C>): HookdError<C> {
  return new HookdError(code, ...args);
}

/** True when `value` is a HookdError, of one of `codes` when any are given. */
export function isHookdError<C extends ErrorCode = ErrorCode>(value: unknown, ...codes: C[]): value is HookdError<C> {
  return value instanceof HookdError && (codes.length === 0 || codes.includes(value.code as C));
}

/** True when the entry answers requests with a status of its own (the first table of docs/errors.md). */
export function hasStatus(code: ErrorCode): boolean {
  return (errorCatalogue[code] as ErrorSpec).status !== undefined;
}

/** The JSON body every error response carries. */
export function errorBody(err: HookdError): { ok: false; error: string; code: ErrorCode; reason?: string } {
  const entry: ErrorSpec = errorCatalogue[err.code];
  const exposeMessage = entry.status !== undefined && (err.statusCode < 500 || entry.exposed === true);
  const error = exposeMessage ? err.message : errorCatalogue.INTERNAL.message(undefined);
  const reason = entry.reason && err.statusCode < 500 ? { reason: entry.reason(err.params) } : {};
  return { ok: false, error, code: err.code, ...reason };
}

/**
 * An error's text as the CLI, the console and a stored failure show it: the message, then for a
 * located transform failure the author's frames and the code frame, as far as they fit in 1 KiB
 * beside the message (the code frame first).
 */
export function failureDetail(err: HookdError): string {
  if (!isHookdError(err, 'TRANSFORM_FAILED')) return err.message;
  const { frames = [], codeFrame } = err.params;
  let room = MAX_ERROR_CHARS - err.message.length;
  const fits = (text: string) => {
    if (text.length + 1 > room) return false;
    room -= text.length + 1;
    return true;
  };
  const frame = codeFrame !== undefined && fits(codeFrame) ? [codeFrame] : [];
  const stack: string[] = [];
  for (const f of frames) {
    if (!fits(`    ${f}`)) break;
    stack.push(`    ${f}`);
  }
  return [err.message, ...stack, ...frame].join('\n');
}
