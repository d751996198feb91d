import { type Cancel, type Stamp, stampOf, systemClock } from '../../clock.js';
import { hookdError } from '../../errors.js';
import {
  type ClaimedRun,
  type FailureLog,
  failureLog,
  TICK_FAILURE_LOG_MS,
  type WorkShare,
} from '../../store/index.js';
import { armWatchdog, dropLapsing, endCancelled, type Held, type RunLeases, renewLeases } from './run-leases.js';
import { createRunPump, type RunPump } from './run-pump.js';
import type { PendingRun, RunQueue, RunQueueOptions } from './types.js';

export interface ClaimedRunQueueOptions extends RunQueueOptions {
  readonly share: WorkShare;
}

/** A node's claimed runs: its leases, and where its claims of new runs stand. */
export interface ClaimState extends RunLeases {
  readonly options: ClaimedRunQueueOptions;
  /** The claim in flight: one at a time. */
  claiming: Promise<void> | undefined;
  /** Asked to claim while a claim was in flight: another follows it. */
  claimAgain: boolean;
  stopTick: Cancel | undefined;
  /** Runs waiting for a node, as last counted, plus this node's accepts since. */
  backlog: number;
  /** Claims and counts that failed (a store out of reach fails them every quarter lease). */
  readonly claimFailures: FailureLog;
  readonly countFailures: FailureLog;
}

/** Models whose breaker is open here: their runs would only wait (half-open ones may probe). */
const openModels = (runs: RunPump) =>
  runs.slots
    .breakers()
    .filter((b) => b.kind === 'model' && b.state === 'open')
    .map((b) => b.target);

/** Holds the runs a claim sent at `sentAt` returned, and starts what may start. */
export function takeClaimed(q: ClaimState, claimed: readonly ClaimedRun[], sentAt: Stamp): void {
  const { held, runs } = q;
  for (const run of claimed) {
    const entry = held.get(run.id);
    if (entry) {
      // Held here still: its lease had lapsed unnoticed, and is renewed. Given up and still
      // winding down: not started twice; its new lease lapses for a node that runs it.
      if (!entry.abort.signal.aborted) entry.asked = sentAt;
      continue;
    }
    const pending: PendingRun = {
      id: run.id,
      sessionKey: run.sessionKey,
      ...(run.mappingId === undefined ? {} : { mappingId: run.mappingId }),
      ...(run.model === undefined ? {} : { model: run.model }),
    };
    held.set(run.id, { run: pending, asked: sentAt, abort: new AbortController() });
    runs.add(pending);
    if (run.cancelRequested) void endCancelled(q, run.id);
  }
  q.backlog = Math.max(0, q.backlog - claimed.length);
  armWatchdog(q);
  runs.pump();
}

/** Claims runs up to what this node may hold; one claim at a time, another after it when asked meanwhile. */
export function claim(q: ClaimState): void {
  if (q.stopped) return;
  if (q.claiming) {
    q.claimAgain = true;
    return;
  }
  // Runs waiting out a back-off or a breaker hold a lease, not room.
  const room = q.options.maxConcurrent - q.runs.busy();
  if (room <= 0) return;
  const sentAt = stampOf(q.clock);
  const skipModels = openModels(q.runs);
  q.claiming = q.share
    .claimRuns(room, skipModels.length > 0 ? { skipModels } : undefined)
    .then((claimed) => {
      // Claimed while stopping: `stop` frees every lease of this node.
      if (q.stopped) return;
      takeClaimed(q, claimed, sentAt);
      // A full claim may have left more: ask again.
      if (claimed.length === room) q.claimAgain = true;
    })
    .catch((err: unknown) => q.claimFailures.report(err))
    .finally(() => {
      q.claiming = undefined;
      if (q.claimAgain) {
        q.claimAgain = false;
        claim(q);
      }
    });
}

/** Counts the runs waiting for a node (the queue's depth between two counts adds this node's accepts). */
async function countWaiting(q: ClaimState): Promise<void> {
  try {
    q.backlog = await q.share.claimableRuns();
  } catch (err) {
    q.countFailures.report(err);
  }
}

/** Starts the quarter-lease tick and claims what waits; resolves with how many runs this node took. */
async function resumeClaimed(q: ClaimState): Promise<number> {
  q.stopTick = q.clock.setInterval(() => {
    void renewLeases(q);
    void countWaiting(q);
    claim(q);
  }, q.share.leaseMs / 4);
  await countWaiting(q);
  const before = q.held.size;
  claim(q);
  await q.claiming;
  return q.held.size - before;
}

/**
 * Cancels a run wherever it is (docs/runtime.md#cancel): held here, it ends now; held by no live
 * lease, this node takes it and ends it; held by another node, that node is asked, and ends it
 * at its next renewal.
 */
export async function cancelClaimed(q: ClaimState, runId: string): Promise<'ended' | 'requested' | 'finished'> {
  const { runs, options } = q;
  if (await runs.cancel(runId)) return 'ended';
  if (await q.share.takeRun(runId)) {
    await runs.cancelStored(runId, new AbortController().signal);
    return 'ended';
  }
  const run = await options.store.runs.get(runId);
  if (!run || run.summarizedAt !== undefined) return 'finished';
  await options.store.commit((w) => w.runs.requestCancel(runId, q.clock.now()));
  return 'requested';
}

/** Stops claiming and renewing, aborts the runs held, and frees this node's leases once they wound down. */
export async function stopClaimed(q: ClaimState): Promise<void> {
  q.stopped = true;
  q.stopTick?.();
  q.cancelWatchdog?.();
  for (const entry of q.held.values()) entry.abort.abort(hookdError('SHUTTING_DOWN'));
  // No run starts from here on; the executing ones wind down.
  const ending = q.runs.stop();
  await q.claiming;
  await ending;
  for (const failures of [q.renewFailures, q.claimFailures, q.countFailures]) failures.flush();
  await q.share.releaseRuns().catch((err: unknown) => q.log.warn({ err }, 'freeing run leases failed'));
}

/** The state of a node's claimed runs, its run pump made, nothing claimed yet. */
export function createClaimState(options: ClaimedRunQueueOptions): ClaimState {
  const held = new Map<string, Held>();
  const runs = createRunPump(options, {
    signalOf: (run) => held.get(run.id)?.abort.signal,
    ended(run) {
      held.delete(run.id);
      claim(q);
    },
    freed: () => claim(q),
  });
  const log = options.log.child({ component: 'runs' });
  const clock = options.clock ?? systemClock;
  const failures = (msg: string) => failureLog(log, msg, TICK_FAILURE_LOG_MS, clock);
  const q: ClaimState = {
    options,
    share: options.share,
    log,
    clock,
    runs,
    held,
    marginMs: options.share.leaseMs / 4,
    stopped: false,
    renewing: false,
    cancelWatchdog: undefined,
    onWatchdog: () => dropLapsing(q),
    claiming: undefined,
    claimAgain: false,
    stopTick: undefined,
    backlog: 0,
    renewFailures: failures('renewing run leases failed'),
    claimFailures: failures('claiming runs failed; trying again at the next tick'),
    countFailures: failures('counting waiting runs failed'),
  };
  return q;
}

/**
 * The agent runs of one node among several on a shared store (docs/scale.md). No run is handed to
 * the node: it claims runs under a lease, at most as many as it may execute, when it is told
 * of new ones (its own accepts, another node's notification), when a run of its own ends, and
 * every quarter lease (a dead node's lapsed leases). A run waiting out a back-off or a breaker
 * keeps its lease but takes no room (docs/runtime.md#fault-isolation), and runs of a model whose
 * breaker is open here are not claimed. It renews its leases every quarter lease, and ends the
 * runs the operator asked to cancel then; a run whose lease was not renewed in time is aborted a
 * quarter lease before the lease ends, so that the node that takes it over never runs it at the
 * same time. At shutdown its leases are freed for the other nodes.
 */
export function createClaimedRunQueue(options: ClaimedRunQueueOptions): RunQueue {
  const q = createClaimState(options);
  const { runs, held } = q;
  return {
    enqueue() {
      if (q.stopped) return;
      q.backlog++;
      claim(q);
    },
    kick() {
      runs.pump();
      claim(q);
    },
    resume: () => resumeClaimed(q),
    get depth() {
      return held.size + q.backlog;
    },
    waitOf: runs.waitOf,
    cancel: (runId) => cancelClaimed(q, runId),
    stop: () => stopClaimed(q),
  };
}
