import type { FastifyRequest } from 'fastify';
import {
  type Action,
  type ActionOptions,
  type ActionSink,
  parseAgentBody,
  parseWakeBody,
  type RequestReceipt,
} from '../actions/index.js';
import { failureDetail, type HookdError, hookdError, isHookdError } from '../errors.js';
import { flattenHeaders, isCredentialHeader } from '../headers.js';
import { declaredEventType, type HookRequest, type MappingEngine } from '../mapping/index.js';
import { maskValues } from '../secret-text.js';
import type { ParsedBody } from './body.js';
import {
  type CredentialProof,
  queryWithoutToken,
  storedHeaders,
  urlWithoutToken,
  withoutCredentials,
} from './credentials.js';
import { createRequestRecorder, REDACTED, valuesAt } from './request-log.js';

/** What a hook request asks for: its actions, and whether it answers with arrays (a fan-out). */
export interface RequestedActions {
  readonly actions: readonly Action[];
  readonly fanOut: boolean;
}

/** A hook request as the mapping step reads it: a live one, or a replay of a logged one. */
export type HookRequestFacts = Pick<FastifyRequest, 'id' | 'headers' | 'query' | 'url'> & { readonly ip?: string };

/**
 * What the mapping step tells of a request (`mappingId`) and reads of it (its receipt, and which
 * credentials held: kept with a failure).
 */
export interface HookActionsTrail extends CredentialProof {
  mappingId?: string;
  /** The request's event type (docs/mappings.md#event-types), once its mapping is known. */
  eventType?: string;
  readonly receipt?: RequestReceipt;
}

/** Turns a hook request into actions: the built-in endpoints, else the mapping engine (docs/http.md step 6). */
export interface HookActions {
  /**
   * Validates the body of `/wake` or `/agent`, or routes `/<name>` through the mappings
   * (404 when none matches); a failed transform's request is kept for replay before it throws.
   * `trail.mappingId` is set to the mapping that took it (or failed on it).
   */
  actionsFor(
    request: HookRequestFacts,
    subPath: string,
    body: ParsedBody,
    verifiedMappings?: ReadonlySet<string>,
    trail?: HookActionsTrail,
  ): Promise<RequestedActions>;
}

export interface HookActionsOptions {
  readonly sink: ActionSink;
  readonly actionOptions: ActionOptions;
  readonly mappings?: MappingEngine;
  /** `hooks.log.redact`: masked in the whole body a failure keeps too. */
  readonly redact?: readonly string[];
}

/** Creates the request → actions step of the hook routes. */
export function createHookActions(options: HookActionsOptions): HookActions {
  const { sink, actionOptions, mappings } = options;
  const isCredential = mappings?.isCredentialHeader ?? isCredentialHeader;
  const { redactedCopy } = createRequestRecorder({ enabled: false, maxBodyBytes: 0, redact: options.redact ?? [] });

  /** A failed transform's request, kept whole for replay: credentials masked, redacted paths too. */
  const keepFailure = (
    request: HookRequestFacts,
    subPath: string,
    body: ParsedBody,
    err: HookdError,
    proof: CredentialProof & { readonly receipt?: RequestReceipt },
  ) => {
    const { receipt } = proof;
    const { headers, credentials } = storedHeaders(request.headers, isCredential, proof);
    const { bytes, redacted } = redactedCopy(body);
    sink.recordFailure({
      ...(receipt ? { receipt } : {}),
      requestId: request.id,
      subPath,
      url: withoutCredentials(request).url,
      ...(request.ip ? { client: request.ip } : {}),
      headers,
      credentials,
      body: bytes,
      redacted,
      code: err.code,
      // The author's file:line:column, frames and code frame, within 1 KiB (docs/transforms.md#when-a-transform-throws).
      error: failureDetail(err),
    });
  };

  async function route(
    request: HookRequestFacts,
    subPath: string,
    body: ParsedBody,
    verified: ReadonlySet<string> | undefined,
    trail: HookActionsTrail | undefined,
  ) {
    if (!mappings) throw hookdError('NO_MAPPING', { hook: subPath });
    // Templates and transforms never see the credentials: no token or signature header (the
    // engine flattens the headers without them, once), no ?token=.
    const hookRequest: HookRequest = {
      subPath,
      payload: body.payload,
      headers: request.headers,
      query: queryWithoutToken(request.query),
      url: urlWithoutToken(request.url),
      rawBody: body.rawBody,
      payloadIsJsonOfRawBody: body.payloadIsJsonOfRawBody,
      verifiedMappings: verified,
    };
    const outcome = await mappings.route(hookRequest).catch((err: unknown) => {
      const mapping = trail && mappings.resolve(subPath, body.payload, request.headers);
      if (trail && mapping) {
        trail.mappingId = mapping.id;
        const eventType = declaredEventType(mapping, body.payload, flattenHeaders(request.headers, isCredential));
        if (eventType !== undefined) trail.eventType = eventType;
      }
      if (!isHookdError(err, 'TRANSFORM_FAILED')) throw err;
      const failure = withoutRedactedValues(err, body.payload, options.redact ?? []);
      keepFailure(request, subPath, body, failure, trail ?? {});
      throw failure;
    });
    if (outcome.kind === 'none') throw hookdError('NO_MAPPING', { hook: subPath });
    if (trail) {
      trail.mappingId = outcome.mappingId;
      if (outcome.eventType !== undefined) trail.eventType = outcome.eventType;
    }
    return outcome;
  }

  return {
    async actionsFor(request, subPath, body, verifiedMappings, trail) {
      if (subPath === 'wake') return { actions: [parseWakeBody(body.payload)], fanOut: false };
      if (subPath === 'agent') return { actions: [parseAgentBody(body.payload, actionOptions)], fanOut: false };
      return route(request, subPath, body, verifiedMappings, trail);
    },
  };
}

/**
 * A transform's failure with the payload's values at `hooks.log.redact`'s paths masked in its
 * message (its answer, its log line, the request log's reason and the failure kept): the
 * transform's own error can quote them (an error thrown with `bad card ${card.number}`).
 */
function withoutRedactedValues(
  err: HookdError<'TRANSFORM_FAILED'>,
  payload: unknown,
  redact: readonly string[],
): HookdError<'TRANSFORM_FAILED'> {
  if (redact.length === 0) return err;
  const values = valuesAt(
    payload,
    redact.map((path) => path.split('.')),
  );
  const reason = maskValues(err.params.reason, values, REDACTED);
  return reason === err.params.reason ? err : hookdError('TRANSFORM_FAILED', { ...err.params, reason });
}
