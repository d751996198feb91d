import type { ThinkingLevel } from '../../action-shape.js';
import { type Clock, systemClock } from '../../clock.js';
import { isHookdError } from '../../errors.js';
import type { Logger } from '../../log.js';
import { type DeliveryOutcome, LINGER, type RunRecord, type StoreContract } from '../../store/index.js';
import {
  type AttemptRecorderOptions,
  createAttemptRecorder,
  createPromptBudgets,
  type PromptBudgets,
} from '../attempts/index.js';
import type { Delivery } from '../delivery/index.js';
import type { Heartbeat } from '../heartbeat/index.js';
import type { ModelRouter } from '../ports.js';
import { createRunCommits, type RunCommits } from './run-commits.js';
import { callModel, type TurnContext, type TurnParts } from './run-turn.js';

export { SUMMARY_MAX_CHARS, summaryText, WRITE_RETRY } from './run-commits.js';

export interface RunExecutorOptions {
  readonly store: StoreContract;
  readonly models: ModelRouter;
  readonly delivery: Delivery;
  readonly heartbeat: Heartbeat;
  readonly defaultTimeoutSeconds: number;
  readonly defaultThinking?: ThinkingLevel;
  readonly log: Logger;
  /** Transcript messages sent as history (the newest ones). */
  readonly historyLimit?: number;
  /** The whole model request (history and message), in characters, at most (default 200,000). */
  readonly maxPromptChars?: number;
  /** What each model is sent at most, shared with the heartbeat (a context refusal shrinks it). */
  readonly budgets?: PromptBudgets;
  /** Told when a run's stored state changed (started; finished and summarised). */
  readonly onRunUpdate?: (runId: string) => void;
  /** Told of every failed model try and delivery attempt with its run (alerts). */
  readonly onAttempt?: AttemptRecorderOptions['onAttempt'];
  /** Time for records, run time limits and the back-off between write tries. */
  readonly clock?: Clock;
}

/** What one execution of a run runs under. */
export interface RunContext extends TurnContext {
  /**
   * Aborts the run's work (its model call, its delivery, its waits): a cancel (its reason is
   * RUN_CANCELLED, and the run ends `cancelled`), or a shutdown (the run stays unsummarized).
   */
  readonly signal: AbortSignal;
  /** Aborted only by a shutdown (or a lease given up): it ends a cancelled run's write tries too. */
  readonly shutdown: AbortSignal;
}

/** True when `signal` was aborted by the operator's cancel, not a shutdown. */
export const isCancelled = (signal: AbortSignal): boolean =>
  signal.aborted && isHookdError(signal.reason, 'RUN_CANCELLED');

/** Carries one run through its steps: model turn, delivery, summary, heartbeat. */
export interface RunExecutor {
  /**
   * Executes `run` from where it stands (a run resumed after a crash skips the steps it
   * finished). A shutdown aborts the model call and the delivery; the run then stays
   * unsummarised and resumes at the next start. A cancel ends it as `cancelled`.
   */
  execute(run: RunRecord, context: RunContext): Promise<void>;
  /** Ends the stored run `runId` as cancelled, unless it is over (docs/runtime.md#cancel). */
  cancel(runId: string, shutdown: AbortSignal): Promise<void>;
}

/** What the executor's steps share: the turn's parts, the delivery, the heartbeat and the run writes. */
export interface ExecutorParts extends TurnParts {
  readonly delivery: Delivery;
  readonly heartbeat: Heartbeat;
  readonly commits: RunCommits;
}

/** The executor's parts from its options, with their defaults. */
export function executorParts(options: RunExecutorOptions): ExecutorParts {
  const { store } = options;
  const log = options.log.child({ component: 'runs' });
  const clock = options.clock ?? systemClock;
  return {
    store,
    models: options.models,
    delivery: options.delivery,
    heartbeat: options.heartbeat,
    log,
    clock,
    historyLimit: options.historyLimit ?? 100,
    maxPromptChars: options.maxPromptChars ?? 200_000,
    budgets: options.budgets ?? createPromptBudgets(log),
    recordAttempt: createAttemptRecorder({
      store,
      log,
      ...(options.onRunUpdate ? { onRunUpdate: options.onRunUpdate } : {}),
      ...(options.onAttempt ? { onAttempt: options.onAttempt } : {}),
    }),
    defaultTimeoutSeconds: options.defaultTimeoutSeconds,
    defaultThinking: options.defaultThinking,
    onRunUpdate: options.onRunUpdate,
    commits: createRunCommits({ store, log, clock }),
  };
}

/** Delivers a finished run's reply, or says why nothing is delivered. */
function deliveryOf(parts: ExecutorParts, run: RunRecord, context: RunContext): Promise<DeliveryOutcome> {
  const { delivery } = parts;
  if (!run.deliver) return Promise.resolve(delivery.skipped('deliver is false'));
  if (run.status !== 'ok') return Promise.resolve(delivery.skipped(`the run ended with ${run.status}`));
  const target = {
    channel: run.channel,
    runId: run.id,
    sessionKey: run.sessionKey,
    ...(run.to === undefined ? {} : { to: run.to }),
  };
  const { signal, gate } = context;
  return delivery.deliver(target, run.output ?? '', { signal, gate, onAttempt: parts.recordAttempt(run) });
}

/** Ends `run` as cancelled and tells the live log. */
export async function endCancelled(parts: ExecutorParts, run: RunRecord, shutdown: AbortSignal): Promise<void> {
  await parts.commits.cancelled(run, shutdown);
  parts.onRunUpdate?.(run.id);
  parts.log.info({ runId: run.id, mapping: run.mappingId }, 'run cancelled');
}

/**
 * Executes `queued` from where it stands: its model turn unless a previous process wrote it, its
 * delivery unless one was recorded, then its summary (docs/runtime.md#agent-runs).
 */
export async function executeRun(parts: ExecutorParts, queued: RunRecord, context: RunContext): Promise<void> {
  const { shutdown } = context;
  const { commits } = parts;
  if (isCancelled(context.signal)) return endCancelled(parts, queued, shutdown);
  const fresh = queued.status === 'queued' || queued.status === 'running';
  const turn = fresh ? await callModel(parts, queued, context) : undefined;
  if (isCancelled(context.signal)) return endCancelled(parts, queued, shutdown);
  if (fresh && !turn) return;
  const run = turn?.run ?? queued;
  // The finished turn not yet written (none when a previous process wrote it).
  let unwritten = turn;
  let outcome = run.delivery;
  if (!outcome) {
    const delivering = run.deliver && run.status === 'ok';
    if (delivering && unwritten) {
      // A delivery is network I/O: the turn is committed first, so that a crash while
      // delivering does not ask the model again.
      const written = unwritten;
      await commits.commit(run.id, (w) => commits.recordTurn(w, written), shutdown, LINGER);
      unwritten = undefined;
    }
    outcome = await deliveryOf(parts, run, context);
    // Cancelled while delivering: nothing more is sent. Cut off by shutdown: left
    // unsummarised, so the next start delivers it again.
    if (delivering && isCancelled(context.signal)) return endCancelled(parts, run, shutdown);
    if (delivering && context.signal.aborted) return;
  }
  await commits.summarize(run, unwritten, outcome, shutdown);
  parts.onRunUpdate?.(run.id);
  parts.log.info({ runId: run.id, status: run.status, delivery: outcome.status, why: outcome.reason }, 'run done');
  if (run.wakeMode === 'now') parts.heartbeat.request();
}

/** Creates the executor of agent runs (docs/runtime.md#agent-runs). */
export function createRunExecutor(options: RunExecutorOptions): RunExecutor {
  const parts = executorParts(options);
  return {
    execute: (run, context) => executeRun(parts, run, context),
    async cancel(runId, shutdown) {
      const run = await parts.store.runs.get(runId);
      if (run && run.summarizedAt === undefined) await endCancelled(parts, run, shutdown);
    },
  };
}
