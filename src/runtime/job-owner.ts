import { type Cancel, type Clock, stampOf, systemClock, timeLeft } from '../clock.js';
import type { Logger } from '../log.js';
import { type FailureLog, failureLog, TICK_FAILURE_LOG_MS, type WorkShare } from '../store/index.js';

/** A job as this node runs it while it holds the lease; a stopped one is not started again. */
export interface Job {
  start(): unknown;
  /** Resolves once the job has stopped. */
  stop(): Promise<void>;
}

export interface JobOwnerOptions<J extends Job> {
  readonly share: WorkShare;
  /** The job's lease name (`heartbeat`, `mail`). */
  readonly name: string;
  readonly log: Logger;
  /** Makes the job, each time this node takes the lease. */
  readonly make: () => J;
  readonly clock?: Clock;
}

/** A job that one node at a time runs: the one holding its lease. */
export interface JobOwner<J extends Job> {
  /** Takes the lease if it is free, then tries again every quarter lease. */
  start(): Promise<void>;
  /** Stops the job here and frees the lease for another node. */
  stop(): Promise<void>;
  /** The job while it runs on this node. */
  readonly running: J | undefined;
}

/** A job's lease as one node holds it: the job running here, and the lease's tries and timers. */
export interface JobLease<J extends Job> {
  readonly options: JobOwnerOptions<J>;
  readonly log: Logger;
  readonly clock: Clock;
  /** The job is stopped this long before its lease ends: the node taking it over starts only after. */
  readonly marginMs: number;
  running: J | undefined;
  /** The job stopping here, until it has. */
  stopping: Promise<void> | undefined;
  stopped: boolean;
  /** The try to take or renew the lease in flight: one at a time. */
  holding: Promise<void> | undefined;
  stopTick: Cancel | undefined;
  cancelWatchdog: Cancel | undefined;
  /** What the watchdog calls when the lease was not renewed in time; made once. */
  readonly onLapse: () => void;
  /** Holds that failed (a store out of reach fails one every quarter lease). */
  readonly holdFailures: FailureLog;
}

/** A job's lease not taken yet. */
export function jobLease<J extends Job>(options: JobOwnerOptions<J>): JobLease<J> {
  const log = options.log.child({ job: options.name });
  const clock = options.clock ?? systemClock;
  const lease: JobLease<J> = {
    options,
    log,
    clock,
    marginMs: options.share.leaseMs / 4,
    running: undefined,
    stopping: undefined,
    stopped: false,
    holding: undefined,
    stopTick: undefined,
    cancelWatchdog: undefined,
    onLapse: () => {
      dropJob(lease, 'the lease could not be renewed in time').catch((err: unknown) =>
        log.error({ err }, 'stopping the job failed'),
      );
    },
    holdFailures: failureLog(log, 'holding the lease failed', TICK_FAILURE_LOG_MS, clock),
  };
  return lease;
}

/** Stops the job running here (why: logged); resolves once it stopped. */
export function dropJob<J extends Job>(lease: JobLease<J>, why: string): Promise<void> {
  lease.cancelWatchdog?.();
  const was = lease.running;
  if (!was) return lease.stopping ?? Promise.resolve();
  lease.running = undefined;
  lease.log.info({ why }, 'no longer running the job here');
  lease.stopping = was.stop().finally(() => {
    lease.stopping = undefined;
  });
  return lease.stopping;
}

/** Takes or renews the lease once (one try at a time). */
export function holdLease<J extends Job>(lease: JobLease<J>): Promise<void> {
  if (lease.stopped) return Promise.resolve();
  lease.holding ??= tryHold(lease).finally(() => {
    lease.holding = undefined;
  });
  return lease.holding;
}

/**
 * Asks for the lease: held, the watchdog is set a margin before it ends and the job starts here
 * unless it runs; held elsewhere, the job stops here. A failure is logged: the next tick tries again.
 */
async function tryHold<J extends Job>(lease: JobLease<J>): Promise<void> {
  const { share, name } = lease.options;
  const { clock, log } = lease;
  const sentAt = stampOf(clock);
  try {
    const taken = await share.holdJob(name);
    if (lease.stopped) return;
    if (!taken) {
      await dropJob(lease, 'another node holds the lease');
      return;
    }
    lease.cancelWatchdog?.();
    lease.cancelWatchdog = clock.setTimeout(lease.onLapse, timeLeft(sentAt, share.leaseMs, clock) - lease.marginMs);
    if (lease.running) return;
    // The job stopped here before must have wound down before it starts again.
    await lease.stopping;
    if (lease.stopped) return;
    lease.running = lease.options.make();
    log.info('running the job on this node');
    await lease.running.start();
  } catch (err) {
    lease.holdFailures.report(err);
  }
}

/** Stops trying, stops the job here and frees the lease, after a renewal in flight has landed. */
export async function releaseLease<J extends Job>(lease: JobLease<J>): Promise<void> {
  const { share, name } = lease.options;
  lease.stopped = true;
  lease.stopTick?.();
  // A renewal in flight lands before the lease is freed, not after (it would take it again).
  await lease.holding;
  await dropJob(lease, 'shutting down');
  // Freed whether or not this node held it (a DELETE of another node's lease changes nothing).
  lease.holdFailures.flush();
  await share.releaseJob(name).catch((err: unknown) => lease.log.warn({ err }, 'freeing the lease failed'));
}

/**
 * Runs a single-owner job (docs/scale.md) on the node holding its lease. Every node tries to take
 * or renew the lease every quarter lease, so a dead owner is replaced once its lease lapsed. An
 * owner that could not renew in time stops the job a quarter lease before its lease ends, so
 * that the job never runs on two nodes at once.
 */
export function createJobOwner<J extends Job>(options: JobOwnerOptions<J>): JobOwner<J> {
  const lease = jobLease(options);
  return {
    async start() {
      await holdLease(lease);
      // Stopped while the first hold was in flight: no tick outlives the owner.
      if (lease.stopped) return;
      lease.stopTick = lease.clock.setInterval(() => void holdLease(lease), options.share.leaseMs / 4);
    },
    stop: () => releaseLease(lease),
    get running() {
      return lease.running;
    },
  };
}
