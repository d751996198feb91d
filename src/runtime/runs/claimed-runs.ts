import { type Cancel, systemClock } from '../../clock.js';
import { hookdError } from '../../errors.js';
import type { ClaimedRun, WorkShare } from '../../store/index.js';
import { createRunPump } from './run-pump.js';
import type { PendingRun, RunQueue, RunQueueOptions } from './types.js';

export interface ClaimedRunQueueOptions extends RunQueueOptions {
  readonly share: WorkShare;
}

/** A run this node claimed: its lease's end by this node's clock, and what aborts it. */
interface Held {
  readonly run: PendingRun;
  /** When the lease ends at the earliest, by this node's clock (the database adds the lease to its own later clock). */
  until: number;
  /** Aborted when the lease is given up or the node stops: the run is left unfinished. */
  readonly abort: AbortController;
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
  const { share } = options;
  const log = options.log.child({ component: 'runs' });
  const clock = options.clock ?? systemClock;
  const held = new Map<string, Held>();
  const runs = createRunPump(options, {
    signalOf: (run) => held.get(run.id)?.abort.signal,
    ended(run) {
      held.delete(run.id);
      claim();
    },
    freed: () => claim(),
  });
  /** Models whose breaker is open here: their runs would only wait (half-open ones may probe). */
  const openModels = () =>
    runs.slots
      .breakers()
      .filter((b) => b.kind === 'model' && b.state === 'open')
      .map((b) => b.target);
  const tickMs = share.leaseMs / 4;
  // A lease is given up this long before it ends: the node taking it over starts only after.
  const marginMs = share.leaseMs / 4;
  let stopped = false;
  let claiming: Promise<void> | undefined;
  let claimAgain = false;
  let renewing = false;
  let stopTick: Cancel | undefined;
  let cancelWatchdog: Cancel | undefined;
  // Runs waiting for a node, as last counted, plus this node's accepts since.
  let backlog = 0;

  function take(claimed: readonly ClaimedRun[], sentAt: number): void {
    for (const run of claimed) {
      const entry = held.get(run.id);
      if (entry) {
        // Held here still: its lease had lapsed unnoticed, and is renewed. Given up and still
        // winding down: not started twice; its new lease lapses for a node that runs it.
        if (!entry.abort.signal.aborted) entry.until = sentAt + share.leaseMs;
        continue;
      }
      const pending: PendingRun = {
        id: run.id,
        sessionKey: run.sessionKey,
        ...(run.mappingId === undefined ? {} : { mappingId: run.mappingId }),
        ...(run.model === undefined ? {} : { model: run.model }),
      };
      held.set(run.id, { run: pending, until: sentAt + share.leaseMs, abort: new AbortController() });
      runs.add(pending);
      if (run.cancelRequested) void endCancelled(run.id);
    }
    backlog = Math.max(0, backlog - claimed.length);
    arm();
    runs.pump();
  }

  /** Ends a held run the operator asked to cancel (logged, never thrown). */
  function endCancelled(id: string): Promise<unknown> {
    return runs.cancel(id).catch((err: unknown) => log.warn({ err, runId: id }, 'cancelling a run failed'));
  }

  /** Claims runs up to what this node may hold; one claim at a time, another after it when asked meanwhile. */
  function claim(): void {
    if (stopped) return;
    if (claiming) {
      claimAgain = true;
      return;
    }
    // Runs waiting out a back-off or a breaker hold a lease, not room.
    const room = options.maxConcurrent - runs.busy();
    if (room <= 0) return;
    const sentAt = clock.now();
    const skipModels = openModels();
    claiming = share
      .claimRuns(room, skipModels.length > 0 ? { skipModels } : undefined)
      .then((claimed) => {
        // Claimed while stopping: `stop` frees every lease of this node.
        if (stopped) return;
        take(claimed, sentAt);
        // A full claim may have left more: ask again.
        if (claimed.length === room) claimAgain = true;
      })
      .catch((err: unknown) => log.warn({ err }, 'claiming runs failed; trying again at the next tick'))
      .finally(() => {
        claiming = undefined;
        if (claimAgain) {
          claimAgain = false;
          claim();
        }
      });
  }

  /** Gives up the runs whose lease ends within the margin: another node may take them soon. */
  function dropLapsing(): void {
    const now = clock.now();
    for (const [id, entry] of held) {
      if (entry.until - now > marginMs || entry.abort.signal.aborted) continue;
      log.warn({ runId: id }, 'the lease of a run could not be renewed in time; leaving it to another node');
      entry.abort.abort(hookdError('SHUTTING_DOWN'));
      // A run still waiting goes at once; an executing one once its abort has stopped it.
      if (runs.remove(id)) held.delete(id);
    }
    arm();
  }

  /** Sets the watchdog to the moment the earliest lease enters its margin. */
  function arm(): void {
    cancelWatchdog?.();
    let earliest = Number.POSITIVE_INFINITY;
    for (const entry of held.values()) if (!entry.abort.signal.aborted) earliest = Math.min(earliest, entry.until);
    if (stopped || earliest === Number.POSITIVE_INFINITY) return;
    cancelWatchdog = clock.setTimeout(dropLapsing, Math.max(0, earliest - marginMs - clock.now()));
  }

  async function renew(): Promise<void> {
    // Runs given up are not renewed: their leases lapse for another node.
    const ids = [...held].filter(([, entry]) => !entry.abort.signal.aborted).map(([id]) => id);
    if (renewing || ids.length === 0) return;
    renewing = true;
    const sentAt = clock.now();
    try {
      const { renewed, busy, cancelled } = await share.renewRuns(ids);
      for (const id of ids) {
        const entry = held.get(id);
        // A busy lease keeps its end: renewed at the next tick, or given up in time.
        if (entry && !busy.has(id)) entry.until = renewed.has(id) ? sentAt + share.leaseMs : 0;
      }
      dropLapsing();
      for (const id of cancelled) if (held.has(id)) void endCancelled(id);
    } catch (err) {
      log.warn({ err }, 'renewing run leases failed');
    } finally {
      renewing = false;
    }
  }

  async function count(): Promise<void> {
    try {
      backlog = await share.claimableRuns();
    } catch (err) {
      log.warn({ err }, 'counting waiting runs failed');
    }
  }

  return {
    enqueue() {
      if (stopped) return;
      backlog++;
      claim();
    },
    kick() {
      runs.pump();
      claim();
    },
    async resume() {
      stopTick = clock.setInterval(() => {
        void renew();
        void count();
        claim();
      }, tickMs);
      await count();
      const before = held.size;
      claim();
      await claiming;
      return held.size - before;
    },
    get depth() {
      return held.size + backlog;
    },
    waitOf: runs.waitOf,
    async cancel(runId) {
      if (await runs.cancel(runId)) return 'ended';
      // Held by no live lease: this node takes it and ends it. Held by another node: it is asked,
      // and ends it at its next renewal.
      if (await share.takeRun(runId)) {
        await runs.cancelStored(runId, new AbortController().signal);
        return 'ended';
      }
      const run = await options.store.runs.get(runId);
      if (!run || run.summarizedAt !== undefined) return 'finished';
      await options.store.commit((w) => w.runs.requestCancel(runId, clock.now()));
      return 'requested';
    },
    async stop() {
      stopped = true;
      stopTick?.();
      cancelWatchdog?.();
      for (const entry of held.values()) entry.abort.abort(hookdError('SHUTTING_DOWN'));
      // No run starts from here on; the executing ones wind down.
      const ending = runs.stop();
      await claiming;
      await ending;
      await share.releaseRuns().catch((err: unknown) => log.warn({ err }, 'freeing run leases failed'));
    },
  };
}
