import type { RunExecutorOptions } from './run-executor.js';

/** How a run queue executes runs. */
export interface RunQueueOptions extends RunExecutorOptions {
  readonly maxConcurrent: number;
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
  /** Starts queued runs up to `maxConcurrent` (when told of new runs, or when the spacing ends). */
  kick(): void;
  /** Picks up every run a previous process left unfinished, oldest first; resolves with how many. */
  resume(): Promise<number>;
  /** Runs queued or executing. */
  readonly depth: number;
  /** Stops taking runs; aborts model calls in flight (they stay `running` and resume at the next start). */
  stop(): Promise<void>;
}
