import { setMaxListeners } from 'node:events';
import { hookdError } from '../../errors.js';
import type { RunRecord } from '../../store/index.js';
import { createRunPump } from './run-pump.js';
import type { PendingRun } from './run-scheduler.js';
import type { RunQueue, RunQueueOptions } from './types.js';

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
