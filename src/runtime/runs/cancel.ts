import { hookdError } from '../../errors.js';
import type { StoreContract } from '../../store/index.js';
import type { RunQueue } from './types.js';

/** What `POST /api/runs/:id/cancel` answers: ended now, or being ended by the node that runs it. */
export interface CancelAnswer {
  readonly runId: string;
  readonly status: 'cancelled' | 'cancelling';
}

/**
 * Cancels a run (docs/runtime.md#cancel): a queued, waiting or running run ends `cancelled`, its
 * model call aborted, nothing delivered, its summary `Hook <name> (cancelled)`. NOT_FOUND for an
 * unknown run; RUN_FINISHED for one that ended first (its summary posted).
 */
export async function cancelRun(store: StoreContract, queue: RunQueue, runId: string): Promise<CancelAnswer> {
  const run = await store.runs.get(runId);
  if (!run) throw hookdError('NOT_FOUND', { resource: 'run', id: runId });
  if (run.summarizedAt !== undefined) throw hookdError('RUN_FINISHED', { runId, status: run.status });
  const outcome = await queue.cancel(runId);
  const after = (await store.runs.get(runId)) ?? run;
  if (outcome === 'requested' && after.summarizedAt === undefined) return { runId, status: 'cancelling' };
  if (after.status === 'cancelled') return { runId, status: 'cancelled' };
  throw hookdError('RUN_FINISHED', { runId, status: after.status });
}
