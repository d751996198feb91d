import { METHODS } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Accepted, ActionOptions, ActionSink, IdempotencyIntent } from '../actions/index.js';
import { type Clock, systemClock } from '../clock.js';
import type { HooksConfig } from '../config/index.js';
import { type HookdError, isHookdError } from '../errors.js';
import type { Logger } from '../log.js';
import type { MappingEngine } from '../mapping/index.js';
import type { HookOutcomes } from '../runtime/index.js';
import { type BodyOutcome, type ParsedBody, readBody } from './body.js';
import { closeUnread, drainRefused } from './drain.js';
import { toHookdError } from './errors.js';
import { createHookActions } from './hook-actions.js';
import { createHookGate, type HookState, type HookTrail } from './hook-gate.js';
import { createHookRecords, ownIdOfRefused } from './hook-records.js';
import { createInFlightKeys, hashBody, type InFlightKeys, idempotencyKeyOf, keyIsDeliveryId } from './idempotency.js';
import {
  bodyReadReceipt,
  type CredentialFingerprints,
  createCredentialFingerprints,
  openedBySignature,
} from './receipt.js';
import { reasonOf } from './request-log.js';
import { type Answer, answerFor } from './responses.js';
import { handshakeFor, type VerifiedWebhook, verifyWebhook } from './signatures.js';
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
  const { hooks, sink } = options;
  const log = options.log.child({ component: 'hooks' });
  const fingerprints = options.fingerprints ?? createCredentialFingerprints(undefined, hooks.token);
  const throttle = options.throttle ?? createAuthThrottle();
  const clock = options.clock ?? systemClock;
  const gate = createHookGate({ ...options, throttle, log, fingerprints, now: clock.now });
  const requested = createHookActions({ ...options, redact: hooks.log.redact });
  const inFlight = options.inFlight ?? createInFlightKeys();
  const records = createHookRecords({ ...options, clock });
  const { recorder } = records;

  app.decorateRequest('hook', null);
  app.decorateRequest('hookRefusal', null);
  // Every method node:http parses reaches the gate, which answers all but POST 405 (TRACE,
  // PROPFIND and the rest included); CONNECT never reaches a route (app.ts answers it).
  for (const method of METHODS) {
    if (method !== 'CONNECT' && !app.supportedMethods.includes(method)) app.addHttpMethod(method, { hasBody: true });
  }
  const methods = app.supportedMethods.filter((method) => method !== 'CONNECT');
  const lingering = registerBodyReader(app);
  // A request the gate refused has an unread body: bounded like any refused body, then closed.
  app.addHook('onError', async (request, reply, err) => {
    const e = toHookdError(err);
    const answered = { code: e.code, reason: reasonOf(e) };
    if (request.hook === null || !request.hook.trail.authenticated) ownIdOfRefused(request, reply);
    if (request.hook === null) {
      if (request.hookRefusal) Object.assign(request.hookRefusal, answered);
      if (isHookdError(err, 'BUSY')) closeUnread(reply.raw);
      else drainRefused(request.raw, reply.raw, lingering);
    } else {
      Object.assign(request.hook.trail, answered);
      const at = isHookdError(e, 'TRANSFORM_FAILED') ? e.params.location : undefined;
      if (at) request.hook.trail.where = `${at.file}:${at.line}:${at.column}`;
    }
  });
  if (options.outcomes) reportOutcomes(app, options.outcomes, recorder.enabled);
  // What stored no actions (a 4xx, a failed transform, a 204, a refusal) is logged once answered.
  // (A callback hook: no promise per request on the hot path, where it finds the record written.)
  if (recorder.enabled) {
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

  const accept = async (
    request: FastifyRequest,
    body: ParsedBody,
    verified?: VerifiedWebhook,
    idempotent?: Omit<IdempotencyIntent, 'respond'>,
  ): Promise<Answer> => {
    const state = request.hook as HookState;
    const { trail } = state;
    const { actions, fanOut } = await requested.actionsFor(request, state.subPath, body, verified?.mappings, trail);
    if (actions.length === 0 && !idempotent) return { status: 204, body: null };
    const respond = (accepted: readonly Accepted[]) => answerFor(accepted, fanOut);
    const accepted = await sink.accept(actions, {
      requestId: request.id,
      idempotency: idempotent ? { ...idempotent, respond } : undefined,
      record: recorder.enabled
        ? (accepted: readonly Accepted[]) => recorder.accepted(records.factsOf(request, state), accepted, fanOut, trail)
        : undefined,
    });
    trail.logged = recorder.enabled;
    return answerFor(accepted, fanOut);
  };

  /** Checks a tokenless request's signature over its raw bytes, before anything else reads them. */
  const verify = (request: FastifyRequest, state: HookState, raw: Buffer): VerifiedWebhook => {
    const checked = verifyWebhook(state.verifiers, request.headers, raw);
    // Checked, the body is no longer pending: verified, it is a token holder's; else it is refused.
    state.pending?.release();
    if ('failures' in checked) {
      const [first] = checked.failures;
      if (first) state.trail.mappingId = first.mapping;
      throw gate.refuse(request, 'invalid signature', first);
    }
    state.trail.authenticated = true;
    state.trail.signatureHeaders = checked.verifiedHeaders;
    // Read, not yet parsed: `bodyRead` once it parses (invalid JSON leaves nothing to replay).
    const webhookId = checked.webhookId ? { webhookId: checked.webhookId } : {};
    const opened = openedBySignature(state.verifiers, checked.mappings, fingerprints);
    state.trail.receipt = { ...opened, bodyRead: false, ...webhookId };
    for (const id of checked.mappings) options.outcomes?.signatureHeld(id);
    return checked;
  };

  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    const state = request.hook as HookState;
    const outcome = request.body as BodyOutcome | undefined;
    // A body refused before it was whole (413, 415, 408, 503) is never checked: its sender stays unknown.
    const raw = outcome === undefined ? EMPTY : outcome.ok ? outcome.body.rawBody : outcome.rawBody;
    let verified: VerifiedWebhook | undefined;
    if (state.verifiers.length > 0 && raw !== undefined) verified = verify(request, state, raw);
    const body = bodyOf(outcome, state.trail);
    state.trail.body = body;
    if (state.trail.receipt) state.trail.receipt = bodyReadReceipt(state.trail.receipt, fingerprints);
    if (verified) {
      const handshake = handshakeFor(state.verifiers, verified, body.payload);
      if (handshake) {
        // Answered here, before any mapping: its label is the sender's own name for it (docs/presets.md).
        state.trail.eventType = handshake.eventType;
        return reply.code(200).send(handshake.body);
      }
    }
    const key = idempotencyKeyOf(request.headers, verified?.webhookId);
    if (key === undefined) return send(reply, await accept(request, body, verified));
    const intent = { scope: state.subPath, key, bodyHash: hashBody(body.rawBody) };
    const remembered = await inFlight.claim(sink, intent.scope, key, intent.bodyHash, keyIsDeliveryId(request.headers));
    if (remembered) {
      reply.header('idempotent-replayed', 'true');
      return send(reply, { status: remembered.status, body: remembered.body as Answer['body'] });
    }
    try {
      return send(reply, await accept(request, body, verified, intent));
    } finally {
      inFlight.release(intent.scope, key);
    }
  };

  // A callback hook: an async one costs a promise and a microtask turn per request.
  const onRequest = (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => {
    try {
      request.hook = gate.admit(request, reply);
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

function send(reply: FastifyReply, answer: Answer) {
  return answer.body === null ? reply.code(answer.status).send() : reply.code(answer.status).send(answer.body);
}

const EMPTY = Buffer.alloc(0);

/** The parsed body; else its 4xx, an unparsable body's bytes kept for the log (400 `INVALID_JSON`). */
function bodyOf(outcome: BodyOutcome | undefined, trail: HookTrail): ParsedBody {
  if (outcome === undefined) return { payload: {}, rawBody: EMPTY, payloadIsJsonOfRawBody: false };
  if (outcome.ok) return outcome.body;
  if (outcome.rawBody) trail.unparsed = outcome.rawBody;
  throw outcome.error as HookdError;
}
