import type { Accepted, RequestLogRecord, RequestReceipt } from '../actions/index.js';
import type { HooksConfig } from '../config/index.js';
import type { HookdError } from '../errors.js';
import type { CredentialMark } from '../headers.js';
import type { ParsedBody } from './body.js';
import { createPathFinder } from './json-paths.js';
import { answerFor } from './responses.js';

/** What the request log keeps of a body (docs/runtime.md#request-log-and-replay). */
export interface RequestLogSettings {
  readonly enabled: boolean;
  readonly maxBodyBytes: number;
  /** Dotted JSON paths whose values are masked; `*` stands for any key or index. */
  readonly redact: readonly string[];
}

/** What a request's log record is built from, besides how it ended. */
export interface RequestFacts {
  readonly id: string;
  readonly receivedAt: number;
  /** `performance.now()` when it arrived. */
  readonly startedMs: number;
  readonly subPath: string;
  /** The path and query, without `token`. */
  readonly url: string;
  /** The client's address (as `server.trustProxy` makes it). */
  readonly client?: string;
  /** Every header, credentials `[masked]`. */
  readonly headers: Readonly<Record<string, string>>;
  readonly credentials: Readonly<Record<string, CredentialMark>>;
  /** It presented the hook token or a valid signature. */
  readonly authenticated: boolean;
  readonly body?: ParsedBody;
  /** The bytes of a body that could not be parsed (400 `INVALID_JSON`). */
  readonly unparsed?: Buffer;
  /** `Content-Length` as sent, for a body never read. */
  readonly declaredBytes?: number;
  readonly replayOf?: string;
  /** A replay run anew on purpose, past its key's remembered answer. */
  readonly forced?: boolean;
  /** How it was let in (a replay: how the request it replays was). */
  readonly receipt?: RequestReceipt;
}

/** How a request ended. */
export interface RequestEnding {
  readonly status: number;
  readonly code?: string;
  /** Why it was refused (its answer's message). */
  readonly reason?: string;
  readonly mappingId?: string;
  /** Its event type: kept for an authenticated request only (a refused one's sender is unknown). */
  readonly eventType?: string;
  readonly eventIds?: readonly string[];
  readonly runIds?: readonly string[];
}

export const REDACTED = '[redacted]';

/** Error text kept in a request log record (as in an answer: 1 KiB). */
const MAX_REASON_CHARS = 1024;

/**
 * What a record says a request failed of: the error's message from the catalogue (which never
 * holds a secret), a 5xx's included: the answer says `internal error` to the sender, the
 * operator reads what happened (`the run queue is full`). An unexpected error stays
 * `internal error` (its cause goes to the log only).
 */
export const reasonOf = (err: HookdError): string => err.message.slice(0, MAX_REASON_CHARS);

/**
 * Whether a request answered `status` keeps its body in the log: a request refused at the door
 * (not authenticated) never does, nor one turned away busy (503: a flood must not fill the log
 * with what it was not let do); docs/runtime.md#request-log-and-replay.
 */
export const keepsBody = (authenticated: boolean, status: number): boolean => authenticated && status !== 503;

type KeptBody = Pick<RequestLogRecord, 'body' | 'bodyBytes' | 'truncated' | 'redacted' | 'bodyWhole'>;
const EMPTY = Buffer.alloc(0);

/** Builds request log records: bodies capped and redacted, or not kept at all. */
export function createRequestRecorder(settings: RequestLogSettings) {
  const paths = settings.redact.map((p) => p.split('.'));
  const holdsRedacted = createPathFinder(paths);
  function record(facts: RequestFacts, ending: RequestEnding): RequestLogRecord {
    const kept = keepsBody(facts.authenticated, ending.status)
      ? keptBody(facts, paths, holdsRedacted, settings.maxBodyBytes)
      : omittedBody(facts);
    // Every field named (absent ones undefined): one shape for every record, cheap to read.
    return {
      id: facts.id,
      receivedAt: facts.receivedAt,
      path: facts.subPath,
      url: facts.url,
      client: facts.client || undefined,
      mappingId: ending.mappingId || undefined,
      eventType: (facts.authenticated && ending.eventType) || undefined,
      status: ending.status,
      code: ending.code || undefined,
      reason: ending.reason || undefined,
      eventIds: ending.eventIds ?? [],
      runIds: ending.runIds ?? [],
      durationMs: Math.max(0, Math.round(performance.now() - facts.startedMs)),
      headers: facts.headers,
      credentials: facts.credentials,
      authenticated: facts.authenticated,
      body: kept.body,
      bodyBytes: kept.bodyBytes,
      truncated: kept.truncated,
      redacted: kept.redacted,
      bodyWhole: kept.bodyWhole,
      replayOf: facts.replayOf || undefined,
      forced: facts.forced || undefined,
      receipt: facts.receipt,
    };
  }
  return {
    enabled: settings.enabled,
    record,
    /** The whole body with the redacted paths masked: a kept failure's copy (docs/runtime.md#request-log-and-replay). */
    redactedCopy: (body: ParsedBody) => redactedBytes(body, paths, holdsRedacted),
    /** The record of a request whose actions were accepted: answered as `answerFor` answers. */
    accepted(
      facts: RequestFacts,
      accepted: readonly Accepted[],
      fanOut: boolean,
      trail: { readonly mappingId?: string; readonly eventType?: string },
    ): RequestLogRecord {
      const eventIds: string[] = [];
      const runIds: string[] = [];
      for (const a of accepted) {
        if (a.kind === 'wake') eventIds.push(a.eventId);
        else runIds.push(a.runId);
      }
      const { status } = answerFor(accepted, fanOut);
      const { mappingId, eventType } = trail;
      return record(facts, { status, code: undefined, reason: undefined, mappingId, eventType, eventIds, runIds });
    },
  };
}

export type RequestRecorder = ReturnType<typeof createRequestRecorder>;

/** A request's mapping and event type, as its record keeps them. */
export function labelsOf(trail: {
  readonly mappingId?: string;
  readonly eventType?: string;
}): Pick<RequestEnding, 'mappingId' | 'eventType'> {
  return {
    ...(trail.mappingId ? { mappingId: trail.mappingId } : {}),
    ...(trail.eventType ? { eventType: trail.eventType } : {}),
  };
}

/** The settings of `hooks.log`. */
export function requestLogSettings(hooks: HooksConfig): RequestLogSettings {
  return { enabled: hooks.log.enabled, maxBodyBytes: hooks.log.maxBodyBytes, redact: hooks.log.redact };
}

/** No body kept: only its size, as received or as declared. */
function omittedBody(facts: RequestFacts): KeptBody {
  const bodyBytes = facts.body?.rawBody.length ?? facts.unparsed?.length ?? facts.declaredBytes ?? 0;
  return { body: EMPTY, bodyBytes, truncated: false, redacted: false, bodyWhole: false };
}

/**
 * The body as kept: redacted paths masked (see `redactedBytes`), then cut at `maxBodyBytes`. A
 * body that could not be parsed is kept raw, unless redaction is configured: its paths cannot
 * be found in it, so nothing of it is kept.
 */
function keptBody(
  facts: RequestFacts,
  paths: readonly (readonly string[])[],
  holdsRedacted: (raw: Buffer) => boolean,
  maxBodyBytes: number,
): KeptBody {
  const { body, unparsed } = facts;
  if (!body && unparsed && paths.length > 0) {
    return { body: EMPTY, bodyBytes: unparsed.length, truncated: false, redacted: true, bodyWhole: false };
  }
  const received = body?.rawBody ?? unparsed ?? EMPTY;
  const { bytes, redacted } = body ? redactedBytes(body, paths, holdsRedacted) : { bytes: received, redacted: false };
  const truncated = bytes.length > maxBodyBytes;
  return {
    body: truncated ? bytes.subarray(0, maxBodyBytes) : bytes,
    bodyBytes: received.length,
    truncated,
    redacted,
    bodyWhole: !truncated && !redacted,
  };
}

/**
 * A body with every redacted path masked, as the parser saw it (after duplicate keys: the last
 * wins). A JSON body is kept raw only when nothing was masked and its text holds no value at a
 * redacted path either (a duplicate key can hide one from the parser, not from the text); else
 * it is re-serialized from the parsed payload, masked (`redacted`). Any other body, when redaction
 * is configured, becomes the JSON of its parsed payload, so that nothing configured as secret is
 * stored raw.
 */
function redactedBytes(
  body: ParsedBody,
  paths: readonly (readonly string[])[],
  holdsRedacted: (raw: Buffer) => boolean,
): { bytes: Buffer; redacted: boolean } {
  if (paths.length === 0 || body.rawBody.length === 0) return { bytes: body.rawBody, redacted: false };
  const masked = redactPaths(body.payload, paths);
  if (!masked.changed && body.payloadIsJsonOfRawBody && !holdsRedacted(body.rawBody))
    return { bytes: body.rawBody, redacted: false };
  return { bytes: Buffer.from(JSON.stringify(masked.value) ?? 'null'), redacted: true };
}

/** A copy of `value` with every value at `paths` replaced by `[redacted]`. */
export function redactPaths(
  value: unknown,
  paths: readonly (readonly string[])[],
): { readonly value: unknown; readonly changed: boolean } {
  let changed = false;
  const mask = (node: unknown, path: readonly string[]): unknown => {
    if (path.length === 0) {
      changed = true;
      return REDACTED;
    }
    if (node === null || typeof node !== 'object') return node;
    const [head, ...rest] = path as [string, ...string[]];
    if (Array.isArray(node)) {
      return node.map((item, i) => (head === '*' || head === String(i) ? mask(item, rest) : item));
    }
    const copy = Object.create(null) as Record<string, unknown>;
    for (const [key, child] of Object.entries(node)) {
      copy[key] = head === '*' || head === key ? mask(child, rest) : child;
    }
    return copy;
  };
  let result = value;
  for (const path of paths) result = mask(result, path);
  return { value: result, changed };
}

/**
 * The text of every string or number at `paths` of `value` or under it (a path may name an
 * object), the values redaction masks, for masking them where else they show.
 */
export function valuesAt(value: unknown, paths: readonly (readonly string[])[]): string[] {
  const found: string[] = [];
  const leaves = (node: unknown): void => {
    if (typeof node === 'string' || typeof node === 'number') found.push(String(node));
    else if (node !== null && typeof node === 'object') for (const child of Object.values(node)) leaves(child);
  };
  const visit = (node: unknown, path: readonly string[]): void => {
    if (path.length === 0) leaves(node);
    if (path.length === 0 || node === null || typeof node !== 'object') return;
    const [head, ...rest] = path as [string, ...string[]];
    for (const [key, child] of Object.entries(node)) if (head === '*' || head === key) visit(child, rest);
  };
  for (const path of paths) visit(value, path);
  return found;
}
