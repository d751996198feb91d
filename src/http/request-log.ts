import type { Accepted, RequestLogRecord, RequestReceipt } from '../actions/index.js';
import type { HooksConfig } from '../config/index.js';
import type { ParsedBody } from './body.js';
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
  /** Without credentials. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: ParsedBody;
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
  readonly mappingId?: string;
  readonly eventIds?: readonly string[];
  readonly runIds?: readonly string[];
}

export const REDACTED = '[redacted]';

/** Builds request log records: bodies capped and redacted. */
export function createRequestRecorder(settings: RequestLogSettings) {
  const paths = settings.redact.map((p) => p.split('.'));
  function record(facts: RequestFacts, ending: RequestEnding): RequestLogRecord {
    const kept = keptBody(facts.body, paths, settings.maxBodyBytes);
    // Every field named (absent ones undefined): one shape for every record, cheap to read.
    return {
      id: facts.id,
      receivedAt: facts.receivedAt,
      path: facts.subPath,
      url: facts.url,
      mappingId: ending.mappingId || undefined,
      status: ending.status,
      code: ending.code || undefined,
      eventIds: ending.eventIds ?? [],
      runIds: ending.runIds ?? [],
      durationMs: Math.max(0, Math.round(performance.now() - facts.startedMs)),
      headers: facts.headers,
      body: kept.body,
      bodyBytes: kept.bodyBytes,
      truncated: kept.truncated,
      redacted: kept.redacted,
      replayOf: facts.replayOf || undefined,
      forced: facts.forced || undefined,
      receipt: facts.receipt,
    };
  }
  return {
    enabled: settings.enabled,
    record,
    /** The record of a request whose actions were accepted: answered as `answerFor` answers. */
    accepted(
      facts: RequestFacts,
      accepted: readonly Accepted[],
      fanOut: boolean,
      trail: { readonly mappingId?: string },
    ): RequestLogRecord {
      const eventIds: string[] = [];
      const runIds: string[] = [];
      for (const a of accepted) {
        if (a.kind === 'wake') eventIds.push(a.eventId);
        else runIds.push(a.runId);
      }
      const { status } = answerFor(accepted, fanOut);
      return record(facts, { status, eventIds, runIds, ...(trail.mappingId ? { mappingId: trail.mappingId } : {}) });
    },
  };
}

export type RequestRecorder = ReturnType<typeof createRequestRecorder>;

/** The settings of `hooks.log`. */
export function requestLogSettings(hooks: HooksConfig): RequestLogSettings {
  return { enabled: hooks.log.enabled, maxBodyBytes: hooks.log.maxBodyBytes, redact: hooks.log.redact };
}

/**
 * The body as kept: redacted paths masked (a JSON body is re-serialized only when something was
 * masked; any other body, when redaction is configured, is kept as the JSON of its parsed
 * payload so that nothing configured as secret is stored raw), then cut at `maxBodyBytes`.
 */
function keptBody(
  body: ParsedBody | undefined,
  paths: readonly (readonly string[])[],
  maxBodyBytes: number,
): Pick<RequestLogRecord, 'body' | 'bodyBytes' | 'truncated' | 'redacted'> {
  if (!body) return { body: Buffer.alloc(0), bodyBytes: 0, truncated: false, redacted: false };
  let bytes = body.rawBody;
  let redacted = false;
  if (paths.length > 0) {
    const masked = redactPaths(body.payload, paths);
    if (masked.changed || !body.payloadIsJsonOfRawBody) {
      bytes = Buffer.from(JSON.stringify(masked.value) ?? 'null');
      redacted = true;
    }
  }
  const truncated = bytes.length > maxBodyBytes;
  return {
    body: truncated ? bytes.subarray(0, maxBodyBytes) : bytes,
    bodyBytes: body.rawBody.length,
    truncated,
    redacted,
  };
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
