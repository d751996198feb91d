import { setMaxListeners } from 'node:events';
import { type Cancel, systemClock } from '../../clock.js';
import { hookdError } from '../../errors.js';
import type { RunRecord } from '../../store/index.js';
import { createRunPump } from './run-pump.js';
import type { PendingRun, RunQueue, RunQueueOptions } from './types.js';

/** The wait before a run that crashed `count` times in a row is tried again: 1 s, doubling, at most 5 min. */
export const crashBackoffMs = (count: number): number => Math.min(300_000, 1000 * 2 ** (count - 1));

/** A stored run as the pump takes it: its first try goes to its model unless it is past the model call. */
export const pendingOf = (
  run: Pick<RunRecord, 'id' | 'sessionKey' | 'mappingId' | 'model' | 'status'>,
): PendingRun => ({
  id: run.id,
  sessionKey: run.sessionKey,
  ...(run.mappingId === undefined ? {} : { mappingId: run.mappingId }),
  ...(run.status === 'queued' || run.status === 'running' ? { model: run.model } : {}),
});

/**
 * Agent runs: started as slots allow (fairly across sources, runs of one session key strictly
 * one after another). Each run ends with its delivery outcome recorded, then its summary on the
 * main session, then (wakeMode now) a heartbeat.
 */
export function createRunQueue(options: RunQueueOptions): RunQueue {
  const { store } = options;
  const shutdown = new AbortController();
  // Each executing run listens on it (its own signal, its model call's deadline, a delivery's
  // back-off) and stops listening when done: runs bound them, not Node's default warning at 10.
  setMaxListeners(0, shutdown.signal);
  const clock = options.clock ?? systemClock;
  /** Runs that crashed (a read failed, a bug): how many times in a row, and their next try's timer. */
  const crashes = new Map<string, { count: number; cancel: Cancel }>();
  const runs = createRunPump(options, {
    signalOf: () => shutdown.signal,
    // A run that crashed is still unfinished in the store: tried again after a back-off, not
    // left until the next start (docs/runtime.md#agent-runs).
    ended(run, crashed) {
      if (!crashed) {
        crashes.delete(run.id);
        return;
      }
      if (stopped) return;
      const count = (crashes.get(run.id)?.count ?? 0) + 1;
      const cancel = clock.setTimeout(() => {
        if (!stopped) runs.add(run);
      }, crashBackoffMs(count));
      crashes.set(run.id, { count, cancel });
    },
  });
  let stopped = false;

  return {
    enqueue(run) {
      if (stopped) return;
      runs.add(run);
    },
    kick: runs.pump,
    async resume() {
      const unfinished = await store.runs.unfinished();
      for (const run of unfinished) runs.add(pendingOf(run));
      return unfinished.length;
    },
    get depth() {
      return runs.waiting + runs.executing;
    },
    waitOf: runs.waitOf,
    async cancel(runId) {
      if (await runs.cancel(runId)) return 'ended';
      // Not held here (this one gateway holds every unfinished run once started): end it as stored.
      const run = await store.runs.get(runId);
      if (!run || run.summarizedAt !== undefined) return 'finished';
      await runs.cancelStored(run.id, shutdown.signal);
      return 'ended';
    },
    async stop() {
      stopped = true;
      for (const crash of crashes.values()) crash.cancel();
      crashes.clear();
      shutdown.abort(hookdError('SHUTTING_DOWN'));
      await runs.stop();
    },
  };
}
