import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ActionSink } from '../actions/index.js';
import type { Clock } from '../clock.js';
import type { HooksConfig } from '../config/index.js';
import { type CredentialTest, isCredentialHeader, MASKED, type MaskedHeaders, type RawHeaders } from '../headers.js';
import { newId } from '../ids.js';
import type { MappingEngine } from '../mapping/index.js';
import { storedHeaders, urlWithoutToken } from './credentials.js';
import type { HookRefusal, HookState } from './hook-gate.js';
import { subPathOf } from './hook-gate.js';
import { createRefusedLog, type RefusedLog } from './refused-log.js';
import {
  createRequestRecorder,
  labelsOf,
  type RequestEnding,
  type RequestFacts,
  requestLogSettings,
} from './request-log.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set when the gate refused the request before it had a state. */
    hookRefusal: HookRefusal | null;
  }
}

export interface HookRecordsOptions {
  readonly hooks: HooksConfig;
  readonly sink: ActionSink;
  readonly mappings?: MappingEngine;
  readonly clock: Clock;
}

/**
 * The request log as the hook routes feed it (docs/runtime.md#request-log-and-replay): the
 * facts of an authenticated request (its record is written with its actions, or once it is
 * answered), and the requests refused at the door, capped per client and minute.
 */
export function createHookRecords(options: HookRecordsOptions) {
  const { hooks, sink, mappings, clock } = options;
  const recorder = createRequestRecorder(requestLogSettings(hooks));
  const isCredential: CredentialTest = mappings?.isCredentialHeader ?? isCredentialHeader;
  const { refusedPerMinute } = hooks.log;
  const refusedLog: RefusedLog | undefined =
    recorder.enabled && refusedPerMinute > 0
      ? createRefusedLog({ perMinute: refusedPerMinute, sink, clock })
      : undefined;

  /** What a record tells of a request the gate let in. */
  const factsOf = (request: FastifyRequest, { subPath, trail }: HookState): RequestFacts => {
    const { headers, credentials } = storedHeaders(request.headers, isCredential, trail);
    const { body, unparsed } = trail;
    // Every field named, absent ones undefined: one shape for every request's facts, which
    // spreads of optional parts turned into a new hidden class (and a missed cache) each time.
    return {
      id: request.id,
      receivedAt: trail.receivedAt,
      startedMs: trail.startedMs,
      subPath,
      url: urlWithoutToken(request.url),
      client: request.ip,
      headers,
      credentials,
      authenticated: trail.authenticated,
      body,
      unparsed: body ? undefined : unparsed,
      declaredBytes: body || unparsed ? undefined : declaredBytes(request),
      replayOf: undefined,
      forced: undefined,
      receipt: trail.receipt,
    };
  };

  const refused = (request: FastifyRequest, ending: RequestEnding, facts: () => RequestFacts) => {
    const answer = { status: ending.status, path: subPathOf(request), ...(ending.code ? { code: ending.code } : {}) };
    refusedLog?.refused(request.ip ?? '', answer, () => recorder.record(facts(), ending));
  };

  return {
    recorder,
    factsOf,
    /**
     * Logs an answered request that stored no actions: an authenticated one in the next group
     * commit, a refused one through the capped refused log.
     */
    answered(request: FastifyRequest, reply: FastifyReply): void {
      const state = request.hook;
      if (state === null) {
        const refusal = request.hookRefusal;
        if (refusal) refused(request, endingOf(reply, refusal), () => refusedFacts(request, isCredential, refusal));
        return;
      }
      const { trail } = state;
      if (trail.logged) return;
      const ending = endingOf(reply, trail);
      if (trail.authenticated) sink.recordRequest(recorder.record(factsOf(request, state), ending));
      else refused(request, ending, () => refusedFacts(request, isCredential, trail, state));
    },
    /** Writes the refused requests held (the gateway is closing). */
    close(): void {
      refusedLog?.flush();
    },
  };
}

export type HookRecords = ReturnType<typeof createHookRecords>;

/** A refused record's header names at most, each cut at MAX_HEADER_NAME_CHARS; its path cut at MAX_REFUSED_PATH_CHARS. */
const MAX_REFUSED_HEADERS = 32;
const MAX_HEADER_NAME_CHARS = 64;
const MAX_REFUSED_PATH_CHARS = 256;

/**
 * What a record tells of a refused request (docs/runtime.md#request-log-and-replay): header
 * names, never a value; the URL's path, bounded, never its query; its body's size only.
 */
function refusedFacts(
  request: FastifyRequest,
  isCredential: CredentialTest,
  at: HookRefusal,
  state?: HookState,
): RequestFacts {
  const { headers, credentials } = headerNamesOf(request.headers, isCredential);
  const { body, unparsed } = state?.trail ?? {};
  return {
    id: request.id,
    receivedAt: at.receivedAt,
    startedMs: at.startedMs,
    subPath: (state?.subPath ?? subPathOf(request)).slice(0, MAX_REFUSED_PATH_CHARS),
    url: refusedPathOf(request.url),
    client: request.ip,
    headers,
    credentials,
    authenticated: false,
    ...(body ? { body } : unparsed ? { unparsed } : { declaredBytes: declaredBytes(request) }),
  };
}

/**
 * A refused request's headers as its record keeps them: names only (a credential's value
 * `[masked]`, any other's empty), at most MAX_REFUSED_HEADERS of them.
 */
function headerNamesOf(headers: RawHeaders, isCredential: CredentialTest): MaskedHeaders {
  const names: Record<string, string> = {};
  const credentials: Record<string, { verified: boolean }> = {};
  let kept = 0;
  for (const key in headers) {
    if (headers[key] === undefined) continue;
    if (kept++ === MAX_REFUSED_HEADERS) break;
    const name = key.toLowerCase().slice(0, MAX_HEADER_NAME_CHARS);
    const credential = isCredential(name);
    names[name] = credential ? MASKED : '';
    if (credential) credentials[name] = { verified: false };
  }
  return { headers: names, credentials };
}

/** A refused request's URL as its record keeps it: the path alone, without the query, cut at MAX_REFUSED_PATH_CHARS. */
function refusedPathOf(url: string): string {
  const query = url.indexOf('?');
  return (query === -1 ? url : url.slice(0, query)).slice(0, MAX_REFUSED_PATH_CHARS);
}

/**
 * A refused request's record, and its answer, take an id of hookd's own: an `x-request-id` its
 * sender chose could name another request's record, which the refused one would then stand
 * in front of (docs/runtime.md#request-log-and-replay).
 */
export function ownIdOfRefused(request: FastifyRequest, reply: FastifyReply): void {
  if (request.id !== request.headers['x-request-id']) return;
  request.id = newId();
  reply.header('x-request-id', request.id);
}

function endingOf(
  reply: FastifyReply,
  trail: { code?: string; reason?: string; mappingId?: string; eventType?: string },
): RequestEnding {
  const { code, reason } = trail;
  return { status: reply.statusCode, ...(code ? { code } : {}), ...(reason ? { reason } : {}), ...labelsOf(trail) };
}

function declaredBytes(request: FastifyRequest): number {
  const declared = Number(request.headers['content-length']);
  return Number.isSafeInteger(declared) && declared > 0 ? declared : 0;
}
