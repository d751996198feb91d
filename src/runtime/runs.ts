import { setMaxListeners } from 'node:events';
import { hookdError } from '../errors.js';
import type { RunRecord } from '../store/index.js';
import type { RunExecutorOptions } from './run-executor.js';
import { createRunPump } from './run-pump.js';
import type { PendingRun } from './run-scheduler.js';

export interface RunQueueOptions extends RunExecutorOptions {
  readonly maxConcurrent: number;
  /**
   * Runs allowed to execute right now, at most `maxConcurrent` (default: `maxConcurrent`);
   * the runtime lowers it while hook requests saturate the event loop. Never below 1.
   */
  readonly concurrency?: () => number;
  /**
   * The least time (ms) between two run starts right now (default 0); the runtime sets it
   * while hook requests saturate the event loop.
   */
  readonly spacingMs?: () => number;
  /** Per-mapping caps on runs executing at once (a mapping's `maxConcurrent`). */
  readonly mappingLimits?: ReadonlyMap<string, number>;
}

/** The agent runs of one gateway: committed runs in, executed ones out. */
export interface RunQueue {
  /** Schedules a committed run. */
  enqueue(runId: string, sessionKey: string, mappingId?: string): void;
  /** Starts queued runs up to the current concurrency (after it was raised, or when told of new runs). */
  kick(): void;
  /** Picks up every run a previous process left unfinished, oldest first; resolves with how many. */
  resume(): Promise<number>;
  /** Runs queued or executing. */
  readonly depth: number;
  /** Stops taking runs; aborts model calls in flight (they stay `running` and resume at the next start). */
  stop(): Promise<void>;
}

export const pendingOf = (run: Pick<RunRecord, 'id' | 'sessionKey' | 'mappingId'>): PendingRun => ({
  id: run.id,
  sessionKey: run.sessionKey,
  ...(run.mappingId === undefined ? {} : { mappingId: run.mappingId }),
});

/**
 * Agent runs: executed in arrival order with at most `maxConcurrent` at once, runs of
 * one session key strictly one after another. Each run ends with its delivery outcome
 * recorded, then its summary on the main session, then (wakeMode now) a heartbeat.
 */
export function createRunQueue(options: RunQueueOptions): RunQueue {
  const { store } = options;
  const shutdown = new AbortController();
  // Each executing run listens on it (its model call's deadline, a delivery's back-off) and stops
  // listening when done: `maxConcurrent` bounds them, not Node's default warning at 10.
  setMaxListeners(0, shutdown.signal);
  const runs = createRunPump(options, { signalOf: () => shutdown.signal });
  let stopped = false;

  return {
    enqueue(runId, sessionKey, mappingId) {
      if (stopped) return;
      runs.add(pendingOf({ id: runId, sessionKey, mappingId }));
      runs.pump();
    },
    kick: runs.pump,
    async resume() {
      const unfinished = await store.runs.unfinished();
      for (const run of unfinished) runs.add(pendingOf(run));
      runs.pump();
      return unfinished.length;
    },
    get depth() {
      return runs.waiting + runs.executing;
    },
    async stop() {
      stopped = true;
      shutdown.abort(hookdError('SHUTTING_DOWN'));
      await runs.stop();
    },
  };
}
