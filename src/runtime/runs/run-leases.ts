import { type Cancel, type Clock, type Stamp, stampOf, timeLeft } from '../../clock.js';
import { hookdError } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { FailureLog, WorkShare } from '../../store/index.js';
import type { RunPump } from './run-pump.js';
import type { PendingRun } from './types.js';

/** A run this node claimed: when its lease was last asked, and what aborts it. */
export interface Held {
  readonly run: PendingRun;
  /** When the lease now held was asked (renewed or claimed); a lease found lost is asked at never (-Infinity). */
  asked: Stamp;
  /** Aborted when the lease is given up or the node stops: the run is left unfinished. */
  readonly abort: AbortController;
}

/**
 * The leases one node holds on the runs it claimed (docs/scale.md): renewed every quarter lease,
 * and given up a margin before they end when a renewal did not get through.
 */
export interface RunLeases {
  readonly share: WorkShare;
  readonly log: Logger;
  readonly clock: Clock;
  /** Where the claimed runs wait and execute. */
  readonly runs: RunPump;
  readonly held: Map<string, Held>;
  /** A lease is given up this long before it ends: the node taking it over starts only after. */
  readonly marginMs: number;
  /** The node stops: no watchdog is set any more. */
  stopped: boolean;
  /** A renewal is in flight: the next tick's waits for none. */
  renewing: boolean;
  cancelWatchdog: Cancel | undefined;
  /** `dropLapsing` of these leases, made once: what the watchdog calls. */
  readonly onWatchdog: () => void;
  /** Renewals that failed (a store out of reach fails one every quarter lease). */
  readonly renewFailures: FailureLog;
}

/** Ends a held run the operator asked to cancel (logged, never thrown). */
export function endCancelled(leases: RunLeases, id: string): Promise<unknown> {
  return leases.runs.cancel(id).catch((err: unknown) => leases.log.warn({ err, runId: id }, 'cancelling a run failed'));
}

/** A lease found lost: ended long ago on both clocks. */
const LOST: Stamp = { monotonic: Number.NEGATIVE_INFINITY, wall: Number.NEGATIVE_INFINITY };

/** Gives up the runs whose lease ends within the margin: another node may take them soon. */
export function dropLapsing(leases: RunLeases): void {
  const { held, runs, log, clock } = leases;
  for (const [id, entry] of held) {
    if (timeLeft(entry.asked, leases.share.leaseMs, clock) > leases.marginMs || entry.abort.signal.aborted) continue;
    log.warn({ runId: id }, 'the lease of a run could not be renewed in time; leaving it to another node');
    entry.abort.abort(hookdError('SHUTTING_DOWN'));
    // A run still waiting goes at once; an executing one once its abort has stopped it.
    if (runs.remove(id)) held.delete(id);
  }
  armWatchdog(leases);
}

/** Sets the watchdog to the moment the earliest lease enters its margin. */
export function armWatchdog(leases: RunLeases): void {
  const { clock } = leases;
  leases.cancelWatchdog?.();
  let least = Number.POSITIVE_INFINITY;
  for (const entry of leases.held.values())
    if (!entry.abort.signal.aborted) least = Math.min(least, timeLeft(entry.asked, leases.share.leaseMs, clock));
  if (leases.stopped || least === Number.POSITIVE_INFINITY) return;
  const delayMs = Math.max(0, least - leases.marginMs);
  leases.cancelWatchdog = clock.setTimeout(leases.onWatchdog, delayMs);
}

/**
 * Renews the leases of the runs still held, one renewal at a time: a renewed lease runs a lease
 * from when it was asked, a busy one keeps its end, a lost one is given up now; the runs the
 * operator asked to cancel meanwhile are ended.
 */
export async function renewLeases(leases: RunLeases): Promise<void> {
  const { held, share, clock } = leases;
  // Runs given up are not renewed: their leases lapse for another node.
  const ids = [...held].filter(([, entry]) => !entry.abort.signal.aborted).map(([id]) => id);
  if (leases.renewing || ids.length === 0) return;
  leases.renewing = true;
  const sentAt = stampOf(clock);
  try {
    const { renewed, busy, cancelled } = await share.renewRuns(ids);
    for (const id of ids) {
      const entry = held.get(id);
      // A busy lease keeps its end: renewed at the next tick, or given up in time.
      if (entry && !busy.has(id)) entry.asked = renewed.has(id) ? sentAt : LOST;
    }
    dropLapsing(leases);
    for (const id of cancelled) if (held.has(id)) void endCancelled(leases, id);
  } catch (err) {
    leases.renewFailures.report(err);
  } finally {
    leases.renewing = false;
  }
}
