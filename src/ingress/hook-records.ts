import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ActionSink } from '../actions/index.js';
import type { Clock } from '../clock.js';
import type { HooksConfig } from '../config/index.js';
import { type CredentialTest, isCredentialHeader } from '../headers.js';
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
    const { receivedAt, startedMs, authenticated, body, unparsed, receipt } = trail;
    return {
      ...(receipt ? { receipt } : {}),
      id: request.id,
      receivedAt,
      startedMs,
      subPath,
      url: urlWithoutToken(request.url),
      client: request.ip,
      headers,
      credentials,
      authenticated,
      ...(body ? { body } : unparsed ? { unparsed } : { declaredBytes: declaredBytes(request) }),
    };
  };

  /** What a record tells of a request refused before the gate made a state for it. */
  const refusedFacts = (request: FastifyRequest, refusal: HookRefusal): RequestFacts => {
    const { headers, credentials } = storedHeaders(request.headers, isCredential, {});
    return {
      id: request.id,
      receivedAt: refusal.receivedAt,
      startedMs: refusal.startedMs,
      subPath: subPathOf(request),
      url: urlWithoutToken(request.url),
      client: request.ip,
      headers,
      credentials,
      authenticated: false,
      declaredBytes: declaredBytes(request),
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
        if (refusal) refused(request, endingOf(reply, refusal), () => refusedFacts(request, refusal));
        return;
      }
      const { trail } = state;
      if (trail.logged) return;
      const ending = endingOf(reply, trail);
      if (trail.authenticated) sink.recordRequest(recorder.record(factsOf(request, state), ending));
      else refused(request, ending, () => factsOf(request, state));
    },
    /** Writes the refused requests held (the gateway is closing). */
    close(): void {
      refusedLog?.flush();
    },
  };
}

export type HookRecords = ReturnType<typeof createHookRecords>;

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
