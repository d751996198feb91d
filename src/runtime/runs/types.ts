import type { TrySlots } from '../isolation/index.js';
import type { RunExecutorOptions } from './run-executor.js';

/** A committed run waiting for its turn. */
export interface PendingRun {
  readonly id: string;
  readonly sessionKey: string;
  readonly mappingId?: string;
  /** Its model, while its model call is still to be made: where its first try goes. */
  readonly model?: string;
}

/** How a run queue executes runs. */
export interface RunQueueOptions extends RunExecutorOptions {
  /** Run slots: tries of runs in flight at once (`agents.defaults.maxConcurrentRuns`). */
  readonly maxConcurrent: number;
  /**
   * The slots runs take, shared with the heartbeat and redeliveries (docs/runtime.md#fault-isolation);
   * without them the queue makes its own from `maxConcurrent`, `spacingMs` and `mappingLimits`.
   */
  readonly slots?: TrySlots;
  /**
   * The least time (ms) between two run starts right now (default 0); the runtime sets it
   * while hook requests saturate the event loop.
   */
  readonly spacingMs?: () => number;
  /** Per-mapping caps on run slots held at once (a mapping's `maxConcurrent`). */
  readonly mappingLimits?: ReadonlyMap<string, number>;
}

/** The agent runs of one gateway: committed runs in, executed ones out. */
export interface RunQueue {
  /** Schedules a committed run; `model` is where its first try goes. */
  enqueue(run: PendingRun): void;
  /** Starts queued runs as slots allow (when told of new runs, or when the spacing ends). */
  kick(): void;
  /** Picks up every run a previous process left unfinished, oldest first; resolves with how many. */
  resume(): Promise<number>;
  /** Runs queued or executing. */
  readonly depth: number;
  /** Why a run this node holds is not trying now, if it says (docs/runtime.md#waiting). */
  waitOf(runId: string): string | undefined;
  /**
   * Cancels the run `runId` (docs/runtime.md#cancel): `ended` once this node ended it,
   * `requested` when another node runs it and ends it within a lease renewal, `finished` when it
   * was over first. Never called for a run that does not exist.
   */
  cancel(runId: string): Promise<'ended' | 'requested' | 'finished'>;
  /** Stops taking runs; aborts model calls in flight (they stay `running` and resume at the next start). */
  stop(): Promise<void>;
}
