import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Accepted, ActionSink, IdempotencyIntent } from '../actions/index.js';
import type { HookdError } from '../errors.js';
import type { HookOutcomes } from '../runtime/index.js';
import type { BodyOutcome, ParsedBody } from './body.js';
import type { HookActions } from './hook-actions.js';
import type { HookGate, HookState, HookTrail } from './hook-gate.js';
import type { HookRecords } from './hook-records.js';
import { hashBody, type InFlightKeys, requestKeyOf } from './idempotency.js';
import { bodyReadReceipt, type CredentialFingerprints, openedBySignature } from './receipt.js';
import { type Answer, answerFor } from './responses.js';
import { handshakeFor, type VerifiedWebhook, verifyWebhook } from './signatures.js';

/** What a hook request's handling shares, made once by the hook routes. */
export interface HookHandling {
  readonly sink: ActionSink;
  readonly outcomes: HookOutcomes | undefined;
  readonly gate: HookGate;
  readonly requested: HookActions;
  readonly inFlight: InFlightKeys;
  readonly records: HookRecords;
  readonly fingerprints: CredentialFingerprints;
}

/**
 * A hook request past the gate, its body read: the signature over the raw bytes, the body
 * parsed, a handshake answered, then idempotency and the actions committed (docs/http.md).
 */
export async function handleHook(ctx: HookHandling, request: FastifyRequest, reply: FastifyReply) {
  const state = request.hook as HookState;
  const outcome = request.body as BodyOutcome | undefined;
  // A body refused before it was whole (413, 415, 408, 503) is never checked: its sender stays unknown.
  const raw = outcome === undefined ? EMPTY : outcome.ok ? outcome.body.rawBody : outcome.rawBody;
  let verified: VerifiedWebhook | undefined;
  if (state.verifiers.length > 0 && raw !== undefined) verified = verify(ctx, request, state, raw);
  const body = bodyOf(outcome, state.trail);
  state.trail.body = body;
  if (state.trail.receipt) state.trail.receipt = bodyReadReceipt(state.trail.receipt, ctx.fingerprints);
  if (verified) {
    const handshake = handshakeFor(state.verifiers, verified, body.payload);
    if (handshake) {
      // Answered here, before any mapping: its label is the sender's own name for it (docs/presets.md).
      state.trail.eventType = handshake.eventType;
      return reply.code(200).send(handshake.body);
    }
  }
  const taken = requestKeyOf(request.headers, state.subPath, verified?.delivery);
  if (taken === undefined) return send(reply, await accept(ctx, request, body, verified));
  const { key } = taken;
  const intent = { scope: taken.scope, key, bodyHash: hashBody(body.rawBody) };
  const { inFlight } = ctx;
  const remembered = await inFlight.claim(ctx.sink, intent.scope, key, intent.bodyHash, taken.deliveryId);
  if (remembered) {
    reply.header('idempotent-replayed', 'true');
    return send(reply, { status: remembered.status, body: remembered.body as Answer['body'] });
  }
  try {
    return send(reply, await accept(ctx, request, body, verified, intent));
  } finally {
    inFlight.release(intent.scope, key);
  }
}

/** The request's actions committed through the sink (with its record); 204 when there are none. */
async function accept(
  ctx: HookHandling,
  request: FastifyRequest,
  body: ParsedBody,
  verified?: VerifiedWebhook,
  idempotent?: Omit<IdempotencyIntent, 'respond'>,
): Promise<Answer> {
  const state = request.hook as HookState;
  const { trail } = state;
  const { records } = ctx;
  const { recorder } = records;
  const { actions, fanOut } = await ctx.requested.actionsFor(request, state.subPath, body, verified?.mappings, trail);
  if (actions.length === 0 && !idempotent) return { status: 204, body: null };
  const respond = (accepted: readonly Accepted[]) => answerFor(accepted, fanOut);
  const accepted = await ctx.sink.accept(actions, {
    requestId: request.id,
    idempotency: idempotent ? { ...idempotent, respond } : undefined,
    record: recorder.enabled
      ? (accepted: readonly Accepted[]) => recorder.accepted(records.factsOf(request, state), accepted, fanOut, trail)
      : undefined,
  });
  trail.logged = recorder.enabled;
  return answerFor(accepted, fanOut);
}

/** Checks a tokenless request's signature over its raw bytes, before anything else reads them. */
function verify(ctx: HookHandling, request: FastifyRequest, state: HookState, raw: Buffer): VerifiedWebhook {
  const checked = verifyWebhook(state.verifiers, request.headers, raw);
  // Checked, the body is no longer pending: verified, it is a token holder's; else it is refused.
  state.pending?.release();
  if ('failures' in checked) {
    const [first] = checked.failures;
    if (first) state.trail.mappingId = first.mapping;
    throw ctx.gate.refuse(request, 'invalid signature', first);
  }
  state.trail.authenticated = true;
  state.trail.signatureHeaders = checked.verifiedHeaders;
  // Read, not yet parsed: `bodyRead` once it parses (invalid JSON leaves nothing to replay).
  const webhookId = checked.delivery ? { webhookId: checked.delivery.webhookId } : {};
  const opened = openedBySignature(state.verifiers, checked.mappings, ctx.fingerprints);
  state.trail.receipt = { ...opened, bodyRead: false, ...webhookId };
  for (const id of checked.mappings) ctx.outcomes?.signatureHeld(id);
  return checked;
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
