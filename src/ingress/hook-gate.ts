import type { ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RequestReceipt } from '../actions/index.js';
import type { HooksConfig } from '../config/index.js';
import { type HookdError, hookdError } from '../errors.js';
import type { Logger } from '../log.js';
import { createLogWindow, type LogWindow } from '../log-window.js';
import type { CompiledMapping, MappingEngine } from '../mapping/index.js';
import type { HookOutcomes } from '../runtime/index.js';
import { createTokenMatcher, findToken, type TokenSource } from './auth.js';
import type { ParsedBody } from './body.js';
import type { CredentialProof } from './credentials.js';
import { busyError, createPendingBodies, type PendingBodies, type PendingBody } from './pending-bodies.js';
import { type CredentialFingerprints, tokenReceipt } from './receipt.js';
import type { SignatureFailure } from './signatures.js';
import type { AuthThrottle } from './throttle.js';

/** What the gate decided about a request it let in. */
export interface HookState {
  /** The part of the path after `hooks.path`, slashes trimmed. */
  readonly subPath: string;
  readonly maxBodyBytes: number;
  /** The raw response, for the body reader's lingering close. */
  readonly res: ServerResponse;
  /** Set when the token was missing or wrong: a signature of one of these must hold. */
  readonly verifiers: readonly CompiledMapping[];
  /** With verifiers: the body's room among the unverified ones, given back once its signature is checked. */
  readonly pending?: PendingBody;
  /** With verifiers: the body arrives within this many ms (`hooks.verifiedPaths.bodyTimeoutMs`). */
  readonly bodyDeadlineMs?: number;
  /** What the request log needs to know of it, filled in as it goes. */
  readonly trail: HookTrail;
}

/** A hook request's progress, as its request log record will tell it (docs/runtime.md#request-log-and-replay). */
export interface HookTrail extends CredentialProof {
  readonly receivedAt: number;
  /** `performance.now()` at arrival. */
  readonly startedMs: number;
  /** A correct token, or (set once checked) a valid signature; else its record is a refused one. */
  authenticated: boolean;
  /** What let it in (set with `authenticated`), as its record and kept failure keep it. */
  receipt?: RequestReceipt;
  body?: ParsedBody;
  /** The bytes of a body that could not be parsed (400 `INVALID_JSON`). */
  unparsed?: Buffer;
  mappingId?: string;
  /** Its event type (docs/mappings.md#event-types): read once its mapping is known. */
  eventType?: string;
  /** The error code it was answered with, and its message. */
  code?: string;
  reason?: string;
  /** For a transform that threw: its author's `file:line:column` (for alerts). */
  where?: string;
  /** True once its record was written with its actions. */
  logged: boolean;
}

/** Where a refused request stood when the gate refused it (no state is made for it). */
export interface HookRefusal {
  readonly receivedAt: number;
  readonly startedMs: number;
  code?: string;
  reason?: string;
}

/** The checks before a hook request's body is read, in the order of docs/http.md (method, token, name). */
export interface HookGate {
  /** Lets a request in (its state) or throws the 405, 400, 401, 429, 404 or 503 `BUSY` to answer. */
  admit(request: FastifyRequest, reply: FastifyReply): HookState;
  /** Counts an authentication failure and returns the 401 (or 429 once locked) to throw. */
  /** `signature`: why a signature did not hold (the first mapping's, when several verify the path). */
  refuse(request: FastifyRequest, why: string, signature?: SignatureFailure): HookdError;
  /** Writes the refusals' lines held back (the gateway is closing). */
  close(): void;
}

export interface HookGateOptions {
  readonly hooks: HooksConfig & { readonly token: string };
  readonly mappings?: MappingEngine;
  readonly throttle: AuthThrottle;
  readonly log: Logger;
  /** What a receipt names the hook token by. */
  readonly fingerprints: CredentialFingerprints;
  /** Told of every refused signature, for alerts (docs/operations.md#alerts). */
  readonly outcomes?: HookOutcomes;
  /** The clock a request's `receivedAt` is read from. */
  readonly now: () => number;
}

const isBuiltIn = (subPath: string) => subPath === 'wake' || subPath === 'agent';

/** A refusal's log line: its fields and its message. */
interface RefusalLine {
  readonly fields: Record<string, unknown>;
  readonly msg: string;
}

/**
 * How often a refusal that repeats is logged: a sender (or an attacker: 18,000 wrong tokens a
 * second from one address) decides how many there are, and each was a line. The first is logged
 * at once with its address; the rest within 10 s are one line with their count (`suppressed`).
 * The request log keeps a record of each, by address (docs/operations.md#backpressure).
 */
const REFUSAL_LOG_EVERY_MS = 10_000;

/** What the gate's functions share, made once. */
interface GateParts {
  readonly options: HookGateOptions;
  /** Refusals' lines, by what their repeats are counted under. */
  readonly lines: LogWindow<RefusalLine>;
  readonly tokenMatches: (token: string) => boolean;
  readonly pendingBodies: PendingBodies;
}

/** Creates the gate of the hook routes. */
export function createHookGate(options: HookGateOptions): HookGate {
  const { maxPendingBytes, maxPendingPerClient } = options.hooks.verifiedPaths;
  const window = createLogWindow<RefusalLine>(REFUSAL_LOG_EVERY_MS, ({ fields, msg }, suppressed) =>
    options.log.warn(suppressed > 0 ? { ...fields, suppressed, intervalMs: REFUSAL_LOG_EVERY_MS } : fields, msg),
  );
  const parts: GateParts = {
    options,
    lines: window,
    tokenMatches: createTokenMatcher(options.hooks.token),
    pendingBodies: createPendingBodies({ maxBytes: maxPendingBytes, maxPerClient: maxPendingPerClient }),
  };
  return {
    refuse: (request, why, signature) => refuse(parts, request, why, signature),
    admit: (request, reply) => admit(parts, request, reply),
    close: () => window.flush(),
  };
}

/** Counts an authentication failure (logged, told to alerts) and returns the 401, or 429 once locked. */
function refuse(
  { options: { throttle, outcomes }, lines }: GateParts,
  request: FastifyRequest,
  why: string,
  signature?: SignatureFailure,
): HookdError {
  const locked = throttle.lockedForSeconds(request.ip);
  const detail = signature ? { mapping: signature.mapping, reason: signature.reason } : {};
  // A stale timestamp's reason names its offset, which the sender picks: counted by its words.
  const reason = detail.reason?.replace(/\d+/g, '#') ?? '';
  lines.report(`${why}\u0000${detail.mapping ?? ''}\u0000${reason}\u0000${locked > 0}`, {
    fields: { reqId: request.id, ip: request.ip, locked: locked > 0, ...detail },
    msg: `hook request refused: ${why}`,
  });
  if (signature) outcomes?.signatureRefused(signature.mapping, signature.reason);
  if (locked > 0) {
    return hookdError('TOO_MANY_AUTH_FAILURES', undefined, { headers: { 'retry-after': String(locked) } });
  }
  throttle.fail(request.ip);
  // A sender with a signature learns what to fix: the header, the clock or the secret.
  return signature ? hookdError('SIGNATURE_INVALID', { reason: signature.reason }) : hookdError('UNAUTHORIZED');
}

/**
 * The mappings whose signature may stand in for a missing or wrong token. A valid signature
 * is never throttled, so a locked client still gets its signature checked (a bad one is 429).
 */
function verifiersFor(parts: GateParts, request: FastifyRequest, subPath: string): readonly CompiledMapping[] {
  const { mappings } = parts.options;
  const verifiers = subPath && !isBuiltIn(subPath) && mappings ? mappings.verifiersFor(subPath) : [];
  if (verifiers.length === 0) throw refuse(parts, request, 'missing or invalid token');
  return verifiers;
}

/**
 * Room for a body that only its signature can authenticate, taken before a byte of it is read
 * (its Content-Length, or as a chunked body arrives); none for a body over its limit (413 unread).
 */
function reserve(
  parts: GateParts,
  request: FastifyRequest,
  reply: FastifyReply,
  maxBodyBytes: number,
): PendingBody | undefined {
  const declared = Number(request.headers['content-length']);
  if (declared > maxBodyBytes) return undefined;
  const admitted = parts.pendingBodies.admit(request.ip, Number.isFinite(declared) ? declared : 0);
  if (typeof admitted === 'string') {
    parts.lines.report(`busy\u0000${admitted}`, {
      fields: { reqId: request.id, ip: request.ip, bound: admitted },
      msg: 'hook request refused: unverified bodies at their bound',
    });
    throw busyError(admitted, parts.options.hooks.verifiedPaths.bodyTimeoutMs);
  }
  // Whatever becomes of the request (a 408, a 413, a client gone), its room is given back.
  reply.raw.once('close', admitted.release);
  return admitted;
}

/** A `?token=` is refused unless allowed, and then answered with a deprecation. */
function checkQueryToken({ options, lines }: GateParts, request: FastifyRequest, reply: FastifyReply): void {
  if (!options.hooks.allowQueryToken) throw hookdError('QUERY_TOKEN_DISABLED');
  reply.header('deprecation', 'true');
  lines.report('query-token', {
    fields: { reqId: request.id },
    msg: 'the ?token= query parameter is deprecated; send Authorization: Bearer instead',
  });
}

/** Lets a request in (its state) or throws the 405, 400, 401, 429, 404 or 503 `BUSY` to answer. */
function admit(parts: GateParts, request: FastifyRequest, reply: FastifyReply): HookState {
  const { options } = parts;
  const { hooks, mappings } = options;
  const receivedAt = options.now();
  const startedMs = performance.now();
  if (request.method !== 'POST') throw hookdError('METHOD_NOT_ALLOWED', undefined, { headers: { allow: 'POST' } });
  const presented = findToken(request.headers, request.query);
  if (presented?.source === 'query') checkQueryToken(parts, request, reply);
  const subPath = subPathOf(request);
  let verifiers: readonly CompiledMapping[] = [];
  // A correct token is never throttled. Without one, mappings with `verify` accept a valid
  // signature instead: checked once the body is read.
  if (presented === undefined || !parts.tokenMatches(presented.token))
    verifiers = verifiersFor(parts, request, subPath);
  if (subPath === '') throw hookdError('NOT_FOUND', { resource: 'hook name', hint: `e.g. ${hooks.path}/wake` });
  const maxBodyBytes = isBuiltIn(subPath) || !mappings ? hooks.maxBodyBytes : mappings.maxBodyBytesFor(subPath);
  const trail = newTrail(receivedAt, startedMs, verifiers.length === 0);
  const res = reply.raw;
  if (presented && trail.authenticated) {
    trail.tokenHeader = TOKEN_HEADER[presented.source];
    trail.receipt = tokenReceipt(presented.source, false, options.fingerprints);
    return { subPath, maxBodyBytes, res, verifiers, pending: undefined, bodyDeadlineMs: undefined, trail };
  }
  const pending = reserve(parts, request, reply, maxBodyBytes);
  const bodyDeadlineMs = hooks.verifiedPaths.bodyTimeoutMs;
  return { subPath, maxBodyBytes, res, verifiers, pending, bodyDeadlineMs, trail };
}

/**
 * A request's trail as the gate starts it: every field named, so that every request's trail
 * has one shape however far it goes (fields added one by one made a new shape at each step).
 */
function newTrail(receivedAt: number, startedMs: number, authenticated: boolean): HookTrail {
  return {
    receivedAt,
    startedMs,
    authenticated,
    tokenHeader: undefined,
    signatureHeaders: undefined,
    receipt: undefined,
    body: undefined,
    unparsed: undefined,
    mappingId: undefined,
    eventType: undefined,
    code: undefined,
    reason: undefined,
    where: undefined,
    logged: false,
  };
}

/** The header each way of presenting the token comes in (a `?token=` comes in none). */
const TOKEN_HEADER: Readonly<Record<TokenSource, string | undefined>> = {
  bearer: 'authorization',
  header: 'x-service-token',
  query: undefined,
};

/** The part of the path after `hooks.path`, slashes trimmed (`/hooks/github/` → `github`). */
export function subPathOf(request: FastifyRequest): string {
  const wildcard = (request.params as Record<string, string | undefined>)['*'] ?? '';
  return wildcard.replace(/^\/+|\/+$/g, '');
}
