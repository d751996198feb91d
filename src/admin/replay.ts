import type { ActionSink, IdempotencyIntent } from '../actions/index.js';
import { hookdError, isHookdError } from '../errors.js';
import type { HookActions, HookActionsTrail as MappingTrail } from '../ingress/index.js';
import {
  type Answer,
  answerFor,
  hashBody,
  type InFlightKeys,
  labelsOf,
  type RequestFacts,
  type RequestRecorder,
  reasonOf,
  requestKeyOf,
  storedKeyOf,
  toHookdError,
} from '../ingress/index.js';
import type { HookOutcomes } from '../runtime/index.js';
import type { Handshake } from '../schemes/index.js';
import { type Replayable, type ReplayRules, replayableOf } from './replay-rules.js';

export interface ReplayerOptions extends ReplayRules {
  readonly sink: ActionSink;
  readonly requested: HookActions;
  readonly recorder: RequestRecorder;
  /** The idempotency keys live requests hold (the hook routes'): a replay takes the same keys. */
  readonly inFlight: InFlightKeys;
  /** Told of a replay a mapping answered 2xx: it clears the mapping's alert (docs/operations.md#alerts). */
  readonly outcomes?: HookOutcomes;
  /** The clock a replay's `receivedAt` is read from (default: the system's). */
  readonly now?: () => number;
}

/** `force`: run anew, past the answer the request's idempotency key remembers. */
export interface ReplayOptions {
  readonly force?: boolean;
}

/** A replay's answer; `remembered` when it is the answer of the run its key already made. */
export interface ReplayAnswer extends Answer {
  readonly remembered?: boolean;
}

type Key = Omit<IdempotencyIntent, 'respond'>;

/** One replay under way: what it runs, how it is logged, what its mapping step tells. */
interface Run {
  readonly source: Replayable;
  readonly facts: RequestFacts;
  readonly trail: MappingTrail;
}

/**
 * Replays a logged request (docs/runtime.md#request-log-and-replay): the *current* mapping and
 * transform run on its whole stored body, if its receipt allows (replay-rules.ts). A replay takes
 * the request's idempotency key (its `Idempotency-Key`, its sender's delivery id, else its own
 * id), so that a replay, the sender's retry and other replays of it make one run between them;
 * `force` runs anew. The replay is logged as a new request with `replayOf`, under `replayId`, and
 * answers what a live request would.
 */
export function createReplayer(options: ReplayerOptions) {
  // This node's replays running now, by key: a concurrent replay of the same request waits for it.
  const replaying: Replaying = { ...options, now: options.now ?? Date.now, running: new Map() };
  return function replay(id: string, replayId: string, replayOptions: ReplayOptions = {}): Promise<ReplayAnswer> {
    return replayRequest(replaying, id, replayId, replayOptions);
  };
}

/** What a replayer's steps share: its options, and this node's replays running now, by key. */
interface Replaying extends ReplayerOptions {
  readonly now: () => number;
  readonly running: Map<string, Promise<ReplayAnswer>>;
}

/** Replays request `id` as `replayId`: its answer, or the error its record was logged with. */
async function replayRequest(
  replaying: Replaying,
  id: string,
  replayId: string,
  replayOptions: ReplayOptions,
): Promise<ReplayAnswer> {
  const { sink, recorder } = replaying;
  const stored = await sink.findRequest(id);
  if (!stored) throw hookdError('NOT_FOUND', { resource: 'request', id });
  const source = replayableOf(id, stored, replaying);
  let facts: RequestFacts = { ...factsOf(replayId, source, replaying.now()), replayOf: id };
  let trail: MappingTrail = {};
  if (source.handshake) return answerHandshake(replaying, id, { ...facts, receipt: source.receipt }, source.handshake);
  try {
    const key = keyOf(id, source);
    // Its replays log the request's receipt, with the key they share when it named none.
    const receipt = { ...source.receipt, ...(key.fromId ? { replayKey: key.key } : {}) };
    facts = { ...facts, receipt, ...(replayOptions.force ? { forced: true } : {}) };
    trail = { receipt };
    const run = { source, facts, trail };
    const answer = replayOptions.force ? await accept(replaying, run) : await once(replaying, run, key);
    if (answer.status < 300) {
      sink.markReplayed(id);
      // A failed replay is not counted: the operator is looking already.
      if (trail.mappingId && !answer.remembered)
        replaying.outcomes?.answered(trail.mappingId, { status: answer.status });
    }
    return answer;
  } catch (err) {
    const e = toHookdError(err);
    const ending = { status: e.statusCode, code: e.code, reason: reasonOf(e), ...labelsOf(trail) };
    sink.recordRequest(recorder.record(facts, ending));
    throw e;
  }
}

/** A handshake answered as it was live (docs/presets.md): its 200, logged, the original marked, and nothing run. */
function answerHandshake(replaying: Replaying, id: string, facts: RequestFacts, handshake: Handshake): ReplayAnswer {
  replaying.sink.recordRequest(replaying.recorder.record(facts, { status: 200, eventType: handshake.eventType }));
  replaying.sink.markReplayed(id);
  return { status: 200, body: handshake.body };
}

/** Runs the mapping and commits its actions (under `key`, when given) with the replay's record. */
async function accept(replaying: Replaying, { source, facts, trail }: Run, key?: Key): Promise<ReplayAnswer> {
  const { sink, recorder } = replaying;
  const query = Object.fromEntries(new URLSearchParams(source.url.split('?')[1] ?? ''));
  const request = { id: facts.id, headers: source.headers, query, url: source.url };
  const { actions, fanOut } = await replaying.requested.actionsFor(
    request,
    source.subPath,
    source.body,
    source.verified,
    trail,
  );
  const respond = (accepted: Parameters<typeof answerFor>[0]) => answerFor(accepted, fanOut);
  const record = (accepted: Parameters<typeof answerFor>[0]) => recorder.accepted(facts, accepted, fanOut, trail);
  const idempotency = key ? { idempotency: { ...key, respond } } : {};
  return respond(await sink.accept(actions, { requestId: facts.id, record, ...idempotency }));
}

/** One run per key on this node: a replay of a request already replaying answers with its result. */
async function once(replaying: Replaying, run: Run, key: Key & { deliveryId: boolean }): Promise<ReplayAnswer> {
  const { running } = replaying;
  const slot = `${key.scope}\u0000${key.key}`;
  const first = running.get(slot);
  if (first) return remembered(replaying, run, await first);
  const claimed = claimAndAccept(replaying, run, key);
  running.set(slot, claimed);
  try {
    return await claimed;
  } finally {
    running.delete(slot);
  }
}

/**
 * Takes the key as a live request does: its remembered answer if any (the sender's retry, or
 * another replay, ran it), else runs under it. A live request holding it is waited for.
 */
async function claimAndAccept(
  replaying: Replaying,
  run: Run,
  key: Key & { deliveryId: boolean },
): Promise<ReplayAnswer> {
  const { sink, inFlight } = replaying;
  const { scope, bodyHash } = key;
  for (;;) {
    let answer: Awaited<ReturnType<InFlightKeys['claim']>>;
    try {
      answer = await inFlight.claim(sink, scope, key.key, bodyHash, key.deliveryId);
    } catch (err) {
      if (!isHookdError(err, 'IDEMPOTENCY_IN_FLIGHT')) throw err;
      await inFlight.released(scope, key.key);
      continue;
    }
    if (answer) return remembered(replaying, run, { status: answer.status, body: answer.body as Answer['body'] });
    try {
      return await accept(replaying, run, key);
    } catch (err) {
      // Another node committed the key first (a shared store): its answer is this one's.
      if (!isHookdError(err, 'IDEMPOTENCY_IN_FLIGHT')) throw err;
      const taken = await sink.findAnswer(scope, key.key);
      if (taken?.bodyHash !== bodyHash) throw err;
      return remembered(replaying, run, { status: taken.status, body: taken.body as Answer['body'] });
    } finally {
      inFlight.release(scope, key.key);
    }
  }
}

/** The answer of the run the key already made, logged as this replay's (no actions of its own). */
function remembered(replaying: Replaying, { facts, trail }: Run, answer: ReplayAnswer): ReplayAnswer {
  replaying.sink.recordRequest(replaying.recorder.record(facts, { status: answer.status, ...labelsOf(trail) }));
  return { status: answer.status, body: answer.body, remembered: true };
}

export type Replayer = ReturnType<typeof createReplayer>;

/** The request's facts as its replay is logged with. */
function factsOf(replayId: string, source: Replayable, receivedAt: number): RequestFacts {
  const { subPath, url, headers, credentials, body } = source;
  const at = { receivedAt, startedMs: performance.now() };
  // The operator's, with the gateway token, of a request first received authenticated.
  return { id: replayId, ...at, subPath, url, headers, credentials, authenticated: true, body };
}

/**
 * The key a replay takes, as the live request took it (`requestKeyOf`): its sender's signed
 * delivery id, else its `Idempotency-Key`, else the key its replays share (the first request's
 * id), scoped by its sub-path.
 */
export function keyOf(id: string, source: Replayable): Key & { deliveryId: boolean; fromId: boolean } {
  const bodyHash = hashBody(source.body.rawBody);
  const own = requestKeyOf(source.headers, source.subPath, source.delivery);
  if (own !== undefined) return { ...own, bodyHash, fromId: false };
  return {
    scope: storedKeyOf(source.subPath),
    key: source.receipt.replayKey ?? id,
    bodyHash,
    deliveryId: false,
    fromId: true,
  };
}
