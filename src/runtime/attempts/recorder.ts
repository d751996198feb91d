import type { Logger } from '../../log.js';
import { LINGER, type StoreContract } from '../../store/index.js';
import type { Attempt, OnFailure, TryTarget } from './attempt.js';

/** The run an attempt belongs to, as its log line names it. */
export interface AttemptOwner {
  readonly id: string;
  readonly mappingId?: string;
  /** The model its model tries call. */
  readonly model?: string;
}

export interface AttemptRecorderOptions {
  readonly store: StoreContract;
  readonly log: Logger;
  /** Told once an attempt is stored (the live log follows the run). */
  readonly onRunUpdate?: (runId: string) => void;
  /** Told of every failed try with its run and what it was to (alerts link to the run, docs/operations.md#alerts). */
  readonly onAttempt?: (run: AttemptOwner, attempt: Attempt, target: TryTarget) => void;
}

/** Records a run's failed try as it happens: a warn line, and a row in the next group commit. */
export type AttemptRecorder = (run: AttemptOwner) => OnFailure;

/**
 * Records failed tries on their runs (docs/runtime.md#attempts): one row each through the group
 * commit (nothing for a try that succeeds), and a warn line with the run id, its mapping and
 * the model or channel the try was to.
 */
export function createAttemptRecorder(options: AttemptRecorderOptions): AttemptRecorder {
  const { store } = options;
  const log = options.log.child({ component: 'attempts' });
  return (run) => (attempt, target) => {
    const mapping = run.mappingId === undefined ? {} : { mapping: run.mappingId };
    log.warn({ runId: run.id, ...mapping, ...target, ...attempt }, `${attempt.kind} attempt failed`);
    options.onAttempt?.(run, attempt, target);
    store.group
      .write((w) => w.runs.recordAttempt({ runId: run.id, ...attempt }), LINGER)
      .then(
        () => options.onRunUpdate?.(run.id),
        (err: unknown) => log.error({ err, runId: run.id }, 'recording a failed attempt failed'),
      );
  };
}
