import { type Cancel, type Clock, systemClock } from '../clock.js';
import type { Logger } from '../log.js';
import type { WorkShare } from '../store/index.js';

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

/**
 * Runs a single-owner job (docs/scale.md) on the node holding its lease. Every node tries to take
 * or renew the lease every quarter lease, so a dead owner is replaced once its lease lapsed. An
 * owner that could not renew in time stops the job a quarter lease before its lease ends, so
 * that the job never runs on two nodes at once.
 */
export function createJobOwner<J extends Job>(options: JobOwnerOptions<J>): JobOwner<J> {
  const { share, name } = options;
  const log = options.log.child({ job: name });
  const clock = options.clock ?? systemClock;
  const marginMs = share.leaseMs / 4;
  let running: J | undefined;
  let stopping: Promise<void> | undefined;
  let stopped = false;
  let holding: Promise<void> | undefined;
  let stopTick: Cancel | undefined;
  let cancelWatchdog: Cancel | undefined;

  function drop(why: string): Promise<void> {
    cancelWatchdog?.();
    const was = running;
    if (!was) return stopping ?? Promise.resolve();
    running = undefined;
    log.info({ why }, 'no longer running the job here');
    stopping = was.stop().finally(() => {
      stopping = undefined;
    });
    return stopping;
  }

  /** Takes or renews the lease once (one try at a time). */
  function hold(): Promise<void> {
    if (stopped) return Promise.resolve();
    holding ??= tryHold().finally(() => {
      holding = undefined;
    });
    return holding;
  }

  async function tryHold(): Promise<void> {
    const sentAt = clock.now();
    try {
      const taken = await share.holdJob(name);
      if (stopped) return;
      if (!taken) {
        await drop('another node holds the lease');
        return;
      }
      cancelWatchdog?.();
      cancelWatchdog = clock.setTimeout(
        () => {
          drop('the lease could not be renewed in time').catch((err: unknown) =>
            log.error({ err }, 'stopping the job failed'),
          );
        },
        sentAt + share.leaseMs - marginMs - clock.now(),
      );
      if (running) return;
      // The job stopped here before must have wound down before it starts again.
      await stopping;
      if (stopped) return;
      running = options.make();
      log.info({ node: share.node }, 'running the job on this node');
      await running.start();
    } catch (err) {
      log.warn({ err }, 'holding the lease failed');
    }
  }

  return {
    async start() {
      await hold();
      // Stopped while the first hold was in flight: no tick outlives the owner.
      if (stopped) return;
      stopTick = clock.setInterval(() => void hold(), share.leaseMs / 4);
    },
    async stop() {
      stopped = true;
      stopTick?.();
      // A renewal in flight lands before the lease is freed, not after (it would take it again).
      await holding;
      await drop('shutting down');
      // Freed whether or not this node held it (a DELETE of another node's lease changes nothing).
      await share.releaseJob(name).catch((err: unknown) => log.warn({ err }, 'freeing the lease failed'));
    },
    get running() {
      return running;
    },
  };
}
