import type { ThinkingLevel } from '../../action-shape.js';
import { type Clock, systemClock } from '../../clock.js';
import { hookdError, isHookdError } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { DeliveryOutcome, RunRecord, SessionMessage, StoreContract } from '../../store/index.js';
import {
  type Attempt,
  type AttemptOwner,
  charsOf,
  completeWithRetries,
  createAttemptRecorder,
  createPromptBudgets,
  historyWithin,
  type PromptBudgets,
  shortened,
  type TryGate,
} from '../attempts/index.js';
import type { Delivery } from '../delivery/index.js';
import type { Heartbeat } from '../heartbeat/index.js';
import type { ModelRouter } from '../ports.js';
import { findInjectionPhrases, wrapExternalContent } from '../safety/index.js';
import { deadline } from '../timeout.js';
import { createRunCommits, type Turn } from './run-commits.js';

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
  readonly onAttempt?: (run: AttemptOwner, attempt: Attempt) => void;
  /** Time for records, run time limits and the back-off between write tries. */
  readonly clock?: Clock;
}

/** What one execution of a run runs under. */
export interface RunContext {
  /**
   * Aborts the run's work (its model call, its delivery, its waits): a cancel (its reason is
   * RUN_CANCELLED, and the run ends `cancelled`), or a shutdown (the run stays unsummarized).
   */
  readonly signal: AbortSignal;
  /** Aborted only by a shutdown (or a lease given up): it ends a cancelled run's write tries too. */
  readonly shutdown: AbortSignal;
  /** Where each model try and delivery try takes its slot (docs/runtime.md#fault-isolation). */
  readonly gate: TryGate;
  /** What the run waits for right now, if anything: a time-out says it. */
  readonly waiting?: () => string | undefined;
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

/** A wrapper's own characters: a message cut to fit the budget is cut before it is wrapped. */
const WRAPPER_CHARS = wrapExternalContent('').length;

/**
 * A run's model request within `budget` characters (docs/runtime.md#context-length): its message
 * (wrapped), cut with a note when it alone is over, after as much of the session's history as
 * fits, oldest left out first.
 */
export function requestOf(
  run: RunRecord,
  history: readonly SessionMessage[],
  budget: number,
): { messages: SessionMessage[]; content: string } {
  const safe = run.allowUnsafeExternalContent;
  const text = shortened(run.message, budget - (safe ? 0 : WRAPPER_CHARS));
  const content = safe ? text : wrapExternalContent(text, run.contentSource);
  return { messages: [...historyWithin(history, budget - content.length), { role: 'user', content }], content };
}

/** Creates the executor of agent runs (docs/runtime.md#agent-runs). */
export function createRunExecutor(options: RunExecutorOptions): RunExecutor {
  const { store, models, delivery, heartbeat } = options;
  const log = options.log.child({ component: 'runs' });
  const clock = options.clock ?? systemClock;
  const now = clock.now;
  const historyLimit = options.historyLimit ?? 100;
  const maxPromptChars = options.maxPromptChars ?? 200_000;
  const budgets = options.budgets ?? createPromptBudgets(log);
  const recordAttempt = createAttemptRecorder({
    store,
    log,
    ...(options.onRunUpdate ? { onRunUpdate: options.onRunUpdate } : {}),
    ...(options.onAttempt ? { onAttempt: options.onAttempt } : {}),
  });

  const commits = createRunCommits({ store, log, clock });

  /**
   * Runs the model turn and returns the finished run (not yet written) with the transcript
   * messages it adds, or undefined when shut down or cancelled mid-call. Marking the run
   * `running` joins the next group commit: a crash before the result is written runs it again
   * either way.
   */
  async function callModel(run: RunRecord, context: RunContext): Promise<Turn | undefined> {
    const startedAt = now();
    store.group
      .write((w) => w.runs.markRunning(run.id, startedAt))
      .then(
        () => options.onRunUpdate?.(run.id),
        (err: unknown) => log.error({ err, runId: run.id }, 'marking a run running failed'),
      );
    const phrases = findInjectionPhrases(run.message);
    if (phrases.length > 0) log.warn({ runId: run.id, phrases }, 'possible prompt injection in hook content');
    const history = await store.messages.recent(run.sessionKey, historyLimit);
    const timeoutSeconds = run.timeoutSeconds ?? options.defaultTimeoutSeconds;
    const timeout = deadline(timeoutSeconds, context.signal, clock);
    const thinking = run.thinking ?? options.defaultThinking;
    const { messages, content } = requestOf(run, history, budgets.of(run.model, maxPromptChars));
    try {
      const reply = await completeWithRetries(
        models,
        run.model,
        { messages, ...(thinking ? { thinking } : {}), signal: timeout.signal },
        { clock, onFailure: recordAttempt(run), gate: context.gate },
      );
      const turn: SessionMessage[] = [
        { role: 'user', content },
        { role: 'assistant', content: reply },
      ];
      return { run: { ...run, status: 'ok', output: reply, startedAt, finishedAt: now() }, messages: turn };
    } catch (err) {
      if (context.signal.aborted && !timeout.timedOut) return undefined;
      const status = timeout.timedOut ? 'timeout' : 'error';
      const waited = timeout.timedOut ? context.waiting?.() : undefined;
      const error = errorOf(err, timeout.timedOut ? timeoutSeconds : undefined, run.model, charsOf(messages), waited);
      log.warn({ runId: run.id, mapping: run.mappingId, status, error }, 'run failed');
      // A failed turn adds nothing to the transcript, but its status is still written.
      return { run: { ...run, status, error, startedAt, finishedAt: now() }, messages: [] };
    } finally {
      timeout.done();
    }
  }

  /**
   * A run's error text. A context-length refusal says how much was sent, and makes the model's
   * later requests smaller (docs/runtime.md#context-length).
   */
  function errorOf(
    err: unknown,
    timedOutAfter: number | undefined,
    model: string,
    sentChars: number,
    waited?: string,
  ): string {
    if (timedOutAfter !== undefined) {
      const failed = isHookdError(err, 'MODEL_UNAVAILABLE') ? err.message : undefined;
      const why = failed !== undefined && waited !== undefined ? `${failed}; ${waited}` : (failed ?? waited);
      const unavailable = why === undefined ? {} : { unavailable: why };
      return hookdError('RUN_TIMED_OUT', { seconds: timedOutAfter, ...unavailable }).message;
    }
    if (!isHookdError(err, 'MODEL_CONTEXT_EXCEEDED')) return (err as Error).message;
    budgets.refused(model, sentChars);
    return hookdError('MODEL_CONTEXT_EXCEEDED', { ...err.params, sentChars }).message;
  }

  function deliveryOf(run: RunRecord, context: RunContext): Promise<DeliveryOutcome> {
    if (!run.deliver) return Promise.resolve(delivery.skipped('deliver is false'));
    if (run.status !== 'ok') return Promise.resolve(delivery.skipped(`the run ended with ${run.status}`));
    const target = {
      channel: run.channel,
      runId: run.id,
      sessionKey: run.sessionKey,
      ...(run.to === undefined ? {} : { to: run.to }),
    };
    const { signal, gate } = context;
    return delivery.deliver(target, run.output ?? '', { signal, gate, onAttempt: recordAttempt(run) });
  }

  /** Ends `run` as cancelled and tells the live log. */
  async function endCancelled(run: RunRecord, shutdown: AbortSignal): Promise<void> {
    await commits.cancelled(run, shutdown);
    options.onRunUpdate?.(run.id);
    log.info({ runId: run.id, mapping: run.mappingId }, 'run cancelled');
  }

  return {
    async execute(queued, context) {
      const { shutdown } = context;
      if (isCancelled(context.signal)) return endCancelled(queued, shutdown);
      const fresh = queued.status === 'queued' || queued.status === 'running';
      const turn = fresh ? await callModel(queued, context) : undefined;
      if (isCancelled(context.signal)) return endCancelled(queued, shutdown);
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
          await commits.commit(run.id, (w) => commits.recordTurn(w, written), shutdown);
          unwritten = undefined;
        }
        outcome = await deliveryOf(run, context);
        // Cancelled while delivering: nothing more is sent. Cut off by shutdown: left
        // unsummarised, so the next start delivers it again.
        if (delivering && isCancelled(context.signal)) return endCancelled(run, shutdown);
        if (delivering && context.signal.aborted) return;
      }
      await commits.summarize(run, unwritten, outcome, shutdown);
      options.onRunUpdate?.(run.id);
      log.info({ runId: run.id, status: run.status, delivery: outcome.status, why: outcome.reason }, 'run done');
      if (run.wakeMode === 'now') heartbeat.request();
    },
    async cancel(runId, shutdown) {
      const run = await store.runs.get(runId);
      if (run && run.summarizedAt === undefined) await endCancelled(run, shutdown);
    },
  };
}
