import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import sjson from 'secure-json-parse';
import { type HookdError, hookdError } from '../errors.js';
import { drain } from './drain.js';
import { busyError, type PendingBody } from './pending-bodies.js';

/** A parsed hook body: the payload, and the raw bytes (for signatures and transforms). */
export interface ParsedBody {
  readonly payload: unknown;
  readonly rawBody: Buffer;
  /** True when `payload` is `JSON.parse` of `rawBody` (so a sandbox can parse the raw text itself). */
  readonly payloadIsJsonOfRawBody: boolean;
}

/** The body parser's outcome: a body, or the 4xx to answer (decided without throwing). */
export type BodyOutcome =
  | { readonly ok: true; readonly body: ParsedBody }
  | {
      readonly ok: false;
      readonly error: HookdError;
      /** The whole body, when it was read and could not be parsed (its signature can still be checked). */
      readonly rawBody?: Buffer;
    };

type BodyKind = 'json' | 'form';

/** `application/json`, `*\/*+json`, `text/plain` and none are JSON; form-urlencoded is form; else unsupported. */
export function classifyContentType(header: string | undefined): BodyKind | undefined {
  if (header === undefined) return 'json';
  const type = (header.split(';')[0] ?? '').trim().toLowerCase();
  if (
    type === '' ||
    type === 'application/json' ||
    type === 'text/plain' ||
    /^[a-z0-9.+-]+\/[a-z0-9.+-]*\+json$/.test(type)
  ) {
    return 'json';
  }
  if (type === 'application/x-www-form-urlencoded') return 'form';
  return undefined;
}

/** How a body is read: within its limit and, until its signature is checked, within the unverified bounds. */
export interface BodyBounds {
  readonly limitBytes: number;
  /** Holds the sockets draining a refused body, so that closing the server can cut them. */
  readonly lingering?: Set<Socket>;
  /** A body not yet authenticated (docs/security.md#hostile-input): its reservation covers every byte read… */
  readonly pending?: PendingBody;
  /** …and it arrives whole within this many ms, else 408 and the connection is closed. */
  readonly deadlineMs?: number;
}

/**
 * Reads a request body within `limitBytes`: decided from Content-Length before reading,
 * and while streaming (chunked bodies, lying lengths). Never rejects for a client's
 * mistake; the outcome says which 4xx (or 503 `BUSY`) to answer.
 */
export function readBody(
  req: IncomingMessage,
  res: ServerResponse,
  payload: NodeJS.ReadableStream,
  bounds: BodyBounds,
): Promise<BodyOutcome> {
  const { limitBytes, lingering, pending, deadlineMs } = bounds;
  const kind = classifyContentType(req.headers['content-type']);
  if (kind === undefined) {
    drain(req, res, payload, lingering);
    return Promise.resolve(
      failure(hookdError('UNSUPPORTED_MEDIA_TYPE', { contentType: String(req.headers['content-type']).slice(0, 100) })),
    );
  }
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limitBytes) {
    drain(req, res, payload, lingering);
    return Promise.resolve(failure(hookdError('PAYLOAD_TOO_LARGE', { limitBytes })));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const refuse = (error: HookdError) => {
      cleanup();
      drain(req, res, payload, lingering);
      resolve(failure(error));
    };
    // Past the unverified bounds a body is not drained (docs/security.md#hostile-input): reading
    // stops, and the connection closes once the answer is out.
    const stop = (error: HookdError) => {
      cleanup();
      payload.pause();
      res.shouldKeepAlive = false;
      resolve(failure(error));
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > limitBytes) return refuse(hookdError('PAYLOAD_TOO_LARGE', { limitBytes }));
      if (pending && !pending.cover(received)) return stop(busyError('bytes', deadlineMs ?? 0));
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      // A body that came in one chunk is that chunk (node's HTTP parser copies each chunk out of
      // the socket's buffer): copying it once more cost about 0.7 µs a 2 KB request.
      const whole = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, received);
      resolve(parseBody(kind, whole));
    };
    const onError = (err: Error) => {
      cleanup();
      reject(err);
    };
    const timer =
      deadlineMs === undefined ? undefined : setTimeout(() => stop(hookdError('REQUEST_TIMEOUT')), deadlineMs);
    const cleanup = () => {
      clearTimeout(timer);
      payload.removeListener('data', onData);
      payload.removeListener('end', onEnd);
      payload.removeListener('error', onError);
    };
    payload.on('data', onData);
    payload.on('end', onEnd);
    payload.on('error', onError);
  });
}

/** Parses a complete body of the given kind. An empty body is `{}`. */
export function parseBody(kind: BodyKind, raw: Buffer): BodyOutcome {
  let text = raw.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (kind === 'form')
    return { ok: true, body: { payload: parseForm(text), rawBody: raw, payloadIsJsonOfRawBody: false } };
  if (text.trim() === '') return { ok: true, body: { payload: {}, rawBody: raw, payloadIsJsonOfRawBody: false } };
  if (nestingDepth(text) > MAX_DEPTH)
    return failure(hookdError('INVALID_JSON', { reason: `nested deeper than ${MAX_DEPTH} levels` }), raw);
  try {
    const value: unknown = mayPoison(text)
      ? sjson.parse(text, undefined, { protoAction: 'remove', constructorAction: 'remove' })
      : JSON.parse(text);
    return { ok: true, body: { payload: value, rawBody: raw, payloadIsJsonOfRawBody: true } };
  } catch (err) {
    return failure(hookdError('INVALID_JSON', { reason: (err as Error).message.slice(0, 200) }), raw);
  }
}

/**
 * Whether a JSON text may hold a `__proto__` or `constructor.prototype` key, spelled out or
 * with `\u` escapes. secure-json-parse scans every text with two regular expressions (about
 * 2 µs for 4 KB); three native substring searches clear most bodies without it.
 */
function mayPoison(text: string): boolean {
  return text.includes('proto') || text.includes('constructor') || text.includes('\\u');
}

/** Payloads nested deeper than this are refused (templates and transforms walk them recursively). */
export const MAX_DEPTH = 64;

/** The deepest `[`/`{` nesting of a JSON text (strings skipped), or a bound of it when that is at most MAX_DEPTH. */
function nestingDepth(text: string): number {
  // A text with at most MAX_DEPTH opening brackets in all cannot nest deeper: counting them
  // with indexOf is native, where the scan below is a JavaScript loop over every character.
  let brackets = 0;
  for (const open of ['{', '[']) {
    for (let i = text.indexOf(open); i !== -1 && brackets <= MAX_DEPTH; i = text.indexOf(open, i + 1)) brackets++;
  }
  if (brackets <= MAX_DEPTH) return brackets;
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92)
        i++; // backslash: skip the escaped character
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 91 || c === 123) {
      if (++depth > max) max = depth;
      if (max > MAX_DEPTH) return max;
    } else if (c === 93 || c === 125) depth--;
  }
  return max;
}

function parseForm(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of new URLSearchParams(text)) {
    if (key === '__proto__' || key === 'constructor' || key === 'prototype') continue;
    out[key] = value;
  }
  return out;
}

function failure(error: HookdError, rawBody?: Buffer): BodyOutcome {
  return rawBody ? { ok: false, error, rawBody } : { ok: false, error };
}
