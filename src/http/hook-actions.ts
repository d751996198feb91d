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
import type { MappingEngine } from '../mapping/index.js';
import type { ParsedBody } from './body.js';
import { withoutCredentials } from './credentials.js';

/** What a hook request asks for: its actions, and whether it answers with arrays (a fan-out). */
export interface RequestedActions {
  readonly actions: readonly Action[];
  readonly fanOut: boolean;
}

/** A hook request as the mapping step reads it: a live one, or a replay of a logged one. */
export type HookRequestFacts = Pick<FastifyRequest, 'id' | 'headers' | 'query' | 'url'>;

/** What the mapping step tells of a request (`mappingId`) and reads of it (its receipt, kept with a failure). */
export interface MappingTrail {
  mappingId?: string;
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
    trail?: MappingTrail,
  ): Promise<RequestedActions>;
}

export interface HookActionsOptions {
  readonly sink: ActionSink;
  readonly actionOptions: ActionOptions;
  readonly mappings?: MappingEngine;
}

/** Creates the request → actions step of the hook routes. */
export function createHookActions(options: HookActionsOptions): HookActions {
  const { sink, actionOptions, mappings } = options;

  const keepFailure = (
    request: HookRequestFacts,
    subPath: string,
    body: ParsedBody,
    err: HookdError,
    receipt: RequestReceipt | undefined,
  ) => {
    const { headers, url } = withoutCredentials(request);
    sink.recordFailure({
      ...(receipt ? { receipt } : {}),
      requestId: request.id,
      subPath,
      url,
      headers,
      body: body.rawBody,
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
    trail: MappingTrail | undefined,
  ) {
    if (!mappings) throw hookdError('NO_MAPPING', { hook: subPath });
    // Templates and transforms never see the credentials: no token header, no ?token=.
    const hookRequest = {
      subPath,
      ...body,
      ...withoutCredentials(request),
      ...(verified ? { verifiedMappings: verified } : {}),
    };
    const outcome = await mappings.route(hookRequest).catch((err: unknown) => {
      if (trail) {
        const mapping = mappings.resolve(subPath, body.payload, request.headers);
        if (mapping) trail.mappingId = mapping.id;
      }
      if (isHookdError(err, 'TRANSFORM_FAILED')) keepFailure(request, subPath, body, err, trail?.receipt);
      throw err;
    });
    if (outcome.kind === 'none') throw hookdError('NO_MAPPING', { hook: subPath });
    if (trail) trail.mappingId = outcome.mappingId;
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
