import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import sjson from 'secure-json-parse';
import { appended } from '../byte-buffer.js';
import { type HookdError, hookdError } from '../errors.js';
import { nestedDeeperThan } from '../json-depth.js';
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
    // The first chunk as it came; a body of more is gathered into one buffer (`appended`).
    let first: Buffer | undefined;
    let kept: Buffer | undefined;
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
      if (first === undefined) first = chunk;
      else kept = appended(kept ?? first, received - chunk.length, chunk, limitBytes);
    };
    const onEnd = () => {
      cleanup();
      // A body that came in one chunk is that chunk (node's HTTP parser copies each chunk out of
      // the socket's buffer): copying it once more cost about 0.7 µs a 2 KB request.
      const whole = kept ? kept.subarray(0, received) : (first ?? Buffer.alloc(0));
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
  if (nestedDeeperThan(text, MAX_DEPTH))
    return failure(hookdError('INVALID_JSON', { reason: `nested deeper than ${MAX_DEPTH} levels` }), raw);
  try {
    // A text that may spell a poisoning key is parsed with those keys removed: the payload is then
    // not the raw body's JSON, and a transform must get the payload, never the raw body parsed again.
    const poisoning = mayPoison(text);
    const value: unknown = poisoning
      ? sjson.parse(text, undefined, { protoAction: 'remove', constructorAction: 'remove' })
      : JSON.parse(text);
    return { ok: true, body: { payload: value, rawBody: raw, payloadIsJsonOfRawBody: !poisoning } };
  } catch {
    // Never the parser's message: V8 quotes the text around the error (`..."password":hunter2sec"...`),
    // which would put a value `hooks.log.redact` masks into the answer and the request log's reason.
    return failure(hookdError('INVALID_JSON', { reason: jsonProblemOf(text) }), raw);
  }
}

/** Where and how a text `JSON.parse` refused goes wrong, in words of hookd's own: never a piece of the text. */
function jsonProblemOf(text: string): string {
  const found = jsonSyntaxError(text);
  if (found === undefined) return 'refused by the JSON parser';
  const lines = text.slice(0, found.at).split('\n');
  // The column counts characters (code points), as an editor does.
  const column = (lines[lines.length - 1] ?? '').replace(/[\ud800-\udbff][\udc00-\udfff]/g, '.').length + 1;
  return `${found.problem} at line ${lines.length}, column ${column}`;
}

/** A syntax error of a JSON text: its offset and what it is; or, while scanning, the offset reached. */
type Scanned = number | { readonly at: number; readonly problem: string };
const stopped = (s: Scanned): s is Exclude<Scanned, number> => typeof s !== 'number';
const errorAt = (text: string, at: number, problem: string) =>
  ({ at, problem: at >= text.length ? 'unexpected end of the body' : problem }) as const;

/** The first syntax error of a text `JSON.parse` refused (RFC 8259), no deeper than it nests (checked before). */
function jsonSyntaxError(text: string): Exclude<Scanned, number> | undefined {
  const end = scanValue(text, 0);
  if (stopped(end)) return end;
  const rest = skipSpace(text, end);
  return rest < text.length ? { at: rest, problem: 'unexpected text after the JSON value' } : undefined;
}

function skipSpace(text: string, from: number): number {
  let i = from;
  for (let c = text.charCodeAt(i); c === 32 || c === 9 || c === 10 || c === 13; c = text.charCodeAt(++i));
  return i;
}

const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;

function scanValue(text: string, from: number): Scanned {
  const i = skipSpace(text, from);
  const c = text.charAt(i);
  if (c === '{' || c === '[') return scanMembers(text, i);
  if (c === '"') return scanString(text, i);
  if (c === '-' || (c >= '0' && c <= '9')) {
    NUMBER.lastIndex = i;
    const end = NUMBER.test(text) ? NUMBER.lastIndex : i;
    // A number goes on with what it cannot take (`1.`, `1e`, `-`, `01`).
    return end === i || /[.eE0-9]/.test(text.charAt(end)) ? errorAt(text, end, 'a malformed number') : end;
  }
  const word = ['true', 'false', 'null'].find((w) => w.startsWith(text.slice(i, i + w.length)) && c !== '');
  if (word && text.startsWith(word, i)) return i + word.length;
  return errorAt(text, word ? text.length : i, 'unexpected character');
}

/** An object's members or an array's elements, from its opening bracket at `open`. */
function scanMembers(text: string, open: number): Scanned {
  const isObject = text.charAt(open) === '{';
  const close = isObject ? '}' : ']';
  let i = skipSpace(text, open + 1);
  if (text.charAt(i) === close) return i + 1;
  for (;;) {
    if (isObject) {
      i = skipSpace(text, i);
      if (text.charAt(i) !== '"') return errorAt(text, i, 'expected a property name in double quotes');
      const key = scanString(text, i);
      if (stopped(key)) return key;
      i = skipSpace(text, key);
      if (text.charAt(i) !== ':') return errorAt(text, i, "expected ':' after a property name");
      i++;
    }
    const value = scanValue(text, i);
    if (stopped(value)) return value;
    i = skipSpace(text, value);
    if (text.charAt(i) === close) return i + 1;
    if (text.charAt(i) !== ',') return errorAt(text, i, `expected ',' or '${close}'`);
    i++;
  }
}

/** A string, from its opening quote at `open`. */
function scanString(text: string, open: number): Scanned {
  for (let i = open + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) return i + 1;
    if (c < 32) return { at: i, problem: 'a control character in a string (it must be escaped)' };
    if (c !== 92) continue;
    const escaped = text.charAt(i + 1);
    const valid = escaped === 'u' ? /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6)) : /^["\\/bfnrt]$/.test(escaped);
    if (!valid) return errorAt(text, i + 1 >= text.length ? i + 1 : i, 'a bad escape in a string');
    i += escaped === 'u' ? 5 : 1;
  }
  return { at: open, problem: 'a string that is never closed' };
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
