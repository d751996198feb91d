import { METHODS } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ActionOptions, ActionSink } from '../actions/index.js';
import { type Clock, systemClock } from '../clock.js';
import type { HooksConfig } from '../config/index.js';
import { isHookdError } from '../errors.js';
import type { Logger } from '../log.js';
import type { MappingEngine } from '../mapping/index.js';
import type { HookOutcomes } from '../runtime/index.js';
import { readBody } from './body.js';
import { closeUnread, drainRefused } from './drain.js';
import { toHookdError } from './errors.js';
import { createHookActions } from './hook-actions.js';
import { createHookGate, type HookState } from './hook-gate.js';
import { type HookHandling, handleHook } from './hook-handler.js';
import { createHookRecords, type HookRecords, ownIdOfRefused } from './hook-records.js';
import { createInFlightKeys, type InFlightKeys } from './idempotency.js';
import { type CredentialFingerprints, createCredentialFingerprints } from './receipt.js';
import { reasonOf } from './request-log.js';
import { type AuthThrottle, createAuthThrottle } from './throttle.js';

/** What the hook routes need; the HTTP layer sees the runtime only through `sink`. */
export interface HookRoutesOptions {
  readonly hooks: HooksConfig & { readonly token: string };
  readonly sink: ActionSink;
  readonly actionOptions: ActionOptions;
  readonly log: Logger;
  /** Routes `/hooks/<name>`; without it every name but wake and agent is 404. */
  readonly mappings?: MappingEngine;
  /** Defaults to 20 failures per 60 s, then a 60 s lock. */
  readonly throttle?: AuthThrottle;
  /** What receipts name credentials by (shared with replay; default: keyed by nothing, unreplayable). */
  readonly fingerprints?: CredentialFingerprints;
  /** The idempotency keys being processed (shared with replay, which takes the same keys). */
  readonly inFlight?: InFlightKeys;
  /** Requests' arrival times and the refused requests' minutes (default: the system clock). */
  readonly clock?: Clock;
  /** Told how mapped requests were answered and of refused signatures, for alerts (docs/operations.md#alerts). */
  readonly outcomes?: HookOutcomes;
}

declare module 'fastify' {
  interface FastifyRequest {
    hook: HookState | null;
  }
}

/**
 * Registers `POST {hooks.path}/*`: the gate (method, token, name), the body within its
 * limit, the signature, idempotency, then the actions committed through the sink.
 */
export async function hookRoutes(app: FastifyInstance, options: HookRoutesOptions): Promise<void> {
  const { hooks } = options;
  const log = options.log.child({ component: 'hooks' });
  const fingerprints = options.fingerprints ?? createCredentialFingerprints(undefined, hooks.token);
  const throttle = options.throttle ?? createAuthThrottle();
  const clock = options.clock ?? systemClock;
  const records = createHookRecords({ ...options, clock });
  const ctx: HookHandling = {
    sink: options.sink,
    outcomes: options.outcomes,
    gate: createHookGate({ ...options, throttle, log, fingerprints, now: clock.now }),
    requested: createHookActions({ ...options, redact: hooks.log.redact }),
    inFlight: options.inFlight ?? createInFlightKeys(),
    records,
    fingerprints,
  };

  app.addHook('onClose', (_instance, done) => {
    ctx.gate.close();
    done();
  });
  app.decorateRequest('hook', null);
  app.decorateRequest('hookRefusal', null);
  const methods = everyMethod(app);
  const lingering = registerBodyReader(app);
  // A request the gate refused has an unread body: bounded like any refused body, then closed.
  app.addHook('onError', async (request, reply, err) => onHookError(request, reply, err, lingering));
  if (options.outcomes) reportOutcomes(app, options.outcomes, records.recorder.enabled);
  if (records.recorder.enabled) registerRecords(app, records);

  const handler = (request: FastifyRequest, reply: FastifyReply) => handleHook(ctx, request, reply);
  // A callback hook: an async one costs a promise and a microtask turn per request.
  const onRequest = (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => {
    try {
      request.hook = ctx.gate.admit(request, reply);
    } catch (err) {
      request.hookRefusal = { receivedAt: clock.now(), startedMs: performance.now() };
      done(err as Error);
      return;
    }
    done();
  };
  for (const url of [hooks.path, `${hooks.path}/*`]) {
    app.route({ method: methods, url, onRequest, handler });
  }
}

/**
 * Every method node:http parses reaches the gate, which answers all but POST 405 (TRACE,
 * PROPFIND and the rest included); CONNECT never reaches a route (app.ts answers it).
 */
function everyMethod(app: FastifyInstance): string[] {
  for (const method of METHODS) {
    if (method !== 'CONNECT' && !app.supportedMethods.includes(method)) app.addHttpMethod(method, { hasBody: true });
  }
  return app.supportedMethods.filter((method) => method !== 'CONNECT');
}

/** Names a failed request's code and reason on its trail; a refused one's unread body is drained or cut. */
function onHookError(request: FastifyRequest, reply: FastifyReply, err: unknown, lingering: Set<Socket>): void {
  const e = toHookdError(err);
  const answered = { code: e.code, reason: reasonOf(e) };
  if (request.hook === null) {
    if (request.hookRefusal) Object.assign(request.hookRefusal, answered);
  } else {
    Object.assign(request.hook.trail, answered);
    const at = isHookdError(e, 'TRANSFORM_FAILED') ? e.params.location : undefined;
    if (at) request.hook.trail.where = `${at.file}:${at.line}:${at.column}`;
  }
  // Refused before anything let it in (at the door, or before a signature held: fastify's own
  // 415 for a Content-Type it cannot parse comes before the body is read): its connection closes.
  if (request.hook?.trail.authenticated) return;
  ownIdOfRefused(request, reply);
  if (isHookdError(err, 'BUSY')) closeUnread(reply.raw);
  else drainRefused(request.raw, reply.raw, lingering);
}

/**
 * What stored no actions (a 4xx, a failed transform, a 204, a refusal) is logged once answered.
 * (A callback hook: no promise per request on the hot path, where it finds the record written.)
 */
function registerRecords(app: FastifyInstance, records: HookRecords): void {
  app.addHook('onResponse', (request, reply, done) => {
    try {
      records.answered(request, reply);
      done();
    } catch (err) {
      done(err as Error);
    }
  });
  app.addHook('onClose', (_app, done) => {
    records.close();
    done();
  });
}

/**
 * Tells `outcomes` how each request a mapping took was answered, once answered: its status,
 * code and (a transform that threw) the author's position; its id when the request log holds it.
 */
function reportOutcomes(app: FastifyInstance, outcomes: HookOutcomes, logged: boolean): void {
  app.addHook('onResponse', (request, reply, done) => {
    const trail = request.hook?.trail;
    try {
      if (trail?.mappingId !== undefined) {
        const { code, where } = trail;
        outcomes.answered(trail.mappingId, {
          status: reply.statusCode,
          ...(code ? { code } : {}),
          ...(where ? { where } : {}),
          ...(logged && trail.authenticated ? { requestId: request.id } : {}),
        });
      }
    } finally {
      done();
    }
  });
}

/** Bodies are read by hookd itself: within the request's limit, refused ones drained (see body.ts). */
function registerBodyReader(app: FastifyInstance): Set<Socket> {
  // Connections draining a refused body are cut when the gateway closes: a client that
  // stopped sending after its 413 would otherwise hold the close up to the drain limit.
  const lingering = new Set<Socket>();
  app.addHook('preClose', (done) => {
    for (const socket of lingering) socket.destroy();
    lingering.clear();
    done();
  });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (request, payload, done) => {
    const state = request.hook as HookState;
    const { maxBodyBytes: limitBytes, pending, bodyDeadlineMs: deadlineMs } = state;
    readBody(request.raw, state.res, payload, { limitBytes, lingering, pending, deadlineMs }).then(
      (outcome) => {
        // A refused body's room is given back at once, not when its connection is done draining.
        if (!outcome.ok) pending?.release();
        done(null, outcome);
      },
      (err: Error) => done(err, undefined),
    );
  });
  return lingering;
}
