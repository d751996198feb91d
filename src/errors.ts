/**
 * The one catalogue of coded errors. Callers match on `code`, never on message text.
 * 4xx messages are safe to show to the sender; 5xx messages are generic unless the
 * entry says otherwise (TRANSFORM_FAILED carries the transform's own message).
 */

interface ErrorSpec {
  readonly status: number;
  readonly message: (detail: string) => string;
}

const spec = (status: number, message: (detail: string) => string): ErrorSpec => ({ status, message });

export const errorCatalogue = {
  NOT_FOUND: spec(404, (d) => d || 'not found'),
  NO_MAPPING: spec(404, (d) => `no mapping for hook: ${d}`),
  METHOD_NOT_ALLOWED: spec(405, () => 'method not allowed; use POST'),
  UNAUTHORIZED: spec(401, () => 'missing or invalid hook token'),
  ADMIN_UNAUTHORIZED: spec(401, () => 'missing or invalid gateway token'),
  TOO_MANY_AUTH_FAILURES: spec(429, () => 'too many failed authentication attempts; retry later'),
  QUERY_TOKEN_DISABLED: spec(400, () => 'the ?token= query parameter is disabled; send Authorization: Bearer <token>'),
  UNSUPPORTED_MEDIA_TYPE: spec(415, (d) => `unsupported content type: ${d}`),
  PAYLOAD_TOO_LARGE: spec(413, (d) => `payload too large: the limit is ${d} bytes`),
  INVALID_JSON: spec(400, (d) => `invalid JSON body: ${d}`),
  INVALID_BODY: spec(400, (d) => d || 'body must be a JSON object'),
  INVALID_FIELD: spec(400, (d) => d),
  TEXT_REQUIRED: spec(400, () => 'text required'),
  MESSAGE_REQUIRED: spec(400, () => 'message required'),
  MODEL_NOT_ALLOWED: spec(400, (d) => `model not allowed: ${d}`),
  UNKNOWN_PROVIDER: spec(400, (d) => `unknown model provider: ${d}`),
  CHANNEL_NOT_CONFIGURED: spec(400, (d) => `channel not configured: ${d}`),
  TOO_MANY_ACTIONS: spec(400, (d) => `a mapping may yield at most 100 actions; got ${d}`),
  IDEMPOTENCY_CONFLICT: spec(409, (d) => d || 'idempotency key conflict'),
  IDEMPOTENCY_IN_FLIGHT: spec(409, () => 'a request with this Idempotency-Key is still being processed; retry later'),
  QUEUE_FULL: spec(503, () => 'the run queue is full; retry later'),
  TRANSFORM_FAILED: spec(500, (d) => `transform failed: ${d}`),
  INTERNAL: spec(500, () => 'internal error'),
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof errorCatalogue;

/** An error with a stable code and HTTP status from the catalogue. */
export class HookdError extends Error {
  readonly code: ErrorCode;
  readonly statusCode: number;
  /** Extra response headers (e.g. Allow, Retry-After). */
  readonly headers: Readonly<Record<string, string>>;

  constructor(code: ErrorCode, detail = '', options: { cause?: unknown; headers?: Record<string, string> } = {}) {
    const entry = errorCatalogue[code];
    super(entry.message(detail), options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'HookdError';
    this.code = code;
    this.statusCode = entry.status;
    this.headers = options.headers ?? {};
  }
}

/** Creates a coded error: `hookdError('MODEL_NOT_ALLOWED', ref)`. */
export function hookdError(
  code: ErrorCode,
  detail = '',
  options: { cause?: unknown; headers?: Record<string, string> } = {},
): HookdError {
  return new HookdError(code, detail, options);
}

/** True when `value` is a HookdError (also across module copies). */
export function isHookdError(value: unknown): value is HookdError {
  return value instanceof HookdError;
}

/** The JSON body every error response carries. */
export function errorBody(err: HookdError): { ok: false; error: string; code: ErrorCode } {
  const exposeMessage = err.statusCode < 500 || err.code === 'TRANSFORM_FAILED';
  return { ok: false, error: exposeMessage ? err.message : errorCatalogue.INTERNAL.message(''), code: err.code };
}

/** A configuration problem, reported with the key path and what was expected. */
export class ConfigError extends Error {
  readonly problems: readonly string[];

  constructor(problems: readonly string[], source?: string) {
    super(`${source ? `${source}: ` : ''}invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}
