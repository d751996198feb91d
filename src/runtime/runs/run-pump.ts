import { systemClock } from '../../clock.js';
import { createRunExecutor } from './run-executor.js';
import { createRunScheduler, type PendingRun } from './run-scheduler.js';
import type { RunQueueOptions } from './types.js';

/** Waiting runs started up to `maxConcurrent`, each read and executed; what both run queues share. */
export interface RunPump {
  add(run: PendingRun): void;
  /** Takes a waiting run out without starting it; false when it is not waiting. */
  remove(id: string): boolean;
  /** Starts waiting runs up to `maxConcurrent`, spaced while the runtime asks for it. */
  pump(): void;
  readonly waiting: number;
  readonly executing: number;
  /** Starts no more runs; resolves once the executing ones ended (abort them first). */
  stop(): Promise<void>;
}

export interface RunPumpHooks {
  /** What aborts `run` (the shutdown; on a shared store, also its lease given up); none: not started. */
  signalOf(run: PendingRun): AbortSignal | undefined;
  /** Told when an execution of `run` ended, whatever its outcome. */
  ended?(run: PendingRun): void;
}

/**
 * Starts waiting runs in arrival order, at most `maxConcurrent` at once, runs of one session key strictly one after another (the scheduler).
 */
export function createRunPump(options: RunQueueOptions, hooks: RunPumpHooks): RunPump {
  const { store } = options;
  const log = options.log.child({ component: 'runs' });
  const scheduler = createRunScheduler(options.mappingLimits);
  const executor = createRunExecutor(options);
  const inFlight = new Set<Promise<void>>();
  let stopped = false;
  let lastStart = Number.NEGATIVE_INFINITY;
  const clock = options.clock ?? systemClock;
  let spaced: (() => void) | undefined;

  function start(next: PendingRun): void {
    const signal = hooks.signalOf(next);
    if (!signal) {
      scheduler.release(next);
      return;
    }
    // Counted in flight from here, while its row is read: the concurrency cap holds.
    const task = store.runs
      .get(next.id)
      .then((run) => run && executor.execute(run, signal))
      .catch((err: unknown) => {
        // An abort ends a write's tries: the run resumes at the next start, or on another node.
        if (!signal.aborted) log.error({ err, runId: next.id }, 'run crashed');
      })
      .finally(() => {
        scheduler.release(next);
        inFlight.delete(task);
        hooks.ended?.(next);
        pump();
      });
    inFlight.add(task);
  }

  function pump(): void {
    const limit = options.maxConcurrent;
    while (!stopped && inFlight.size < limit) {
      const now = clock.now();
      const wait = lastStart + (options.spacingMs?.() ?? 0) - now;
      if (wait > 0) {
        if (scheduler.waiting > 0 && !spaced) {
          spaced = clock.setTimeout(() => {
            spaced = undefined;
            pump();
          }, Math.ceil(wait));
        }
        return;
      }
      const next = scheduler.take();
      if (!next) return;
      lastStart = now;
      start(next);
    }
  }

  return {
    add: scheduler.add,
    remove: scheduler.remove,
    pump,
    get waiting() {
      return scheduler.waiting;
    },
    get executing() {
      return inFlight.size;
    },
    async stop() {
      stopped = true;
      spaced?.();
      await Promise.allSettled([...inFlight]);
    },
  };
}
