import { hookdError } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { DeliveryOutcome, StoreContract } from '../../store/index.js';
import {
  type AttemptOwner,
  type AttemptRecorderOptions,
  createAttemptRecorder,
  type TryGate,
} from '../attempts/index.js';
import type { Delivery } from './delivery.js';

export interface RedeliveriesOptions {
  readonly store: StoreContract;
  readonly delivery: Delivery;
  readonly log: Logger;
  readonly onRunUpdate?: (runId: string) => void;
  /** Told of every failed delivery attempt with its run (alerts). */
  readonly onAttempt?: AttemptRecorderOptions['onAttempt'];
  /** Where a redelivery's tries take their slots: its run's (docs/runtime.md#fault-isolation). */
  readonly gate?: (run: AttemptOwner) => TryGate;
}

/**
 * `POST /api/runs/:id/redeliver` (docs/runtime.md#request-log-and-replay): a run whose chat delivery failed is delivered
 * again, once at a time per run; nothing else of the run is repeated (no model call, no
 * second summary).
 */
export function createRedeliveries(options: RedeliveriesOptions) {
  const { store, delivery } = options;
  const inFlight = new Set<string>();
  const recordAttempt = createAttemptRecorder(options);
  const stopping = new AbortController();
  return {
    async redeliver(runId: string): Promise<DeliveryOutcome> {
      const run = await store.runs.get(runId);
      if (!run) throw hookdError('NOT_FOUND', { resource: 'run', id: runId });
      if (run.delivery?.status !== 'failed')
        throw hookdError('NOT_REDELIVERABLE', { runId, delivery: run.delivery?.status ?? 'none yet' });
      if (inFlight.has(runId)) throw hookdError('REDELIVERY_IN_FLIGHT', { runId });
      inFlight.add(runId);
      try {
        const target = {
          channel: run.channel,
          runId: run.id,
          sessionKey: run.sessionKey,
          ...(run.to === undefined ? {} : { to: run.to }),
        };
        const outcome = await delivery.deliver(target, run.output ?? '', {
          signal: stopping.signal,
          onAttempt: recordAttempt(run),
          ...(options.gate ? { gate: options.gate(run) } : {}),
        });
        await store.group.write((w) => w.runs.recordDelivery(runId, outcome));
        options.onRunUpdate?.(runId);
        return outcome;
      } finally {
        inFlight.delete(runId);
      }
    },
    /** Aborts redeliveries still retrying. */
    stop(): void {
      stopping.abort();
    },
  };
}
