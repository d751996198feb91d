import type { ThinkingLevel } from '../../action-shape.js';
import { MAIN_SESSION } from '../../action-shape.js';
import { type BackoffBounds, backoffMs } from '../../backoff.js';
import { type Clock, systemClock } from '../../clock.js';
import { hookdError, isHookdError } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { DeliveryOutcome, RunRecord, SessionMessage, StoreContract, Writes } from '../../store/index.js';
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
} from '../attempts/index.js';
import type { Delivery } from '../delivery/index.js';
import type { Heartbeat } from '../heartbeat/index.js';
import type { ModelRouter } from '../ports.js';
import { findInjectionPhrases, wrapExternalContent } from '../safety/index.js';
import { deadline } from '../timeout.js';

export const SUMMARY_MAX_CHARS = 2000;
/** Between tries of a run's write the store refused (a full disk): 250 ms doubling to 30 s. */
export const WRITE_RETRY: BackoffBounds = { minMs: 250, maxMs: 30_000 };

/** `Hook <name>: <reply>` / `Hook <name> (error): <reason>` (docs/runtime.md#agent-runs). */
export function summaryText(run: RunRecord): string {
  const label = run.name ? `Hook ${run.name}` : 'Hook';
  if (run.status === 'ok') return `${label}: ${trimTo(run.output ?? '', SUMMARY_MAX_CHARS)}`;
  return `${label} (error): ${trimTo(run.error ?? run.status, SUMMARY_MAX_CHARS)}`;
}

function trimTo(text: string, max: number): string {
  const trimmed = text.trim();
  return trimmed.length > max ? `${trimmed.slice(0, max - 1)}…` : trimmed;
}

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

/** Carries one run through its steps: model turn, delivery, summary, heartbeat. */
export interface RunExecutor {
  /**
   * Executes `run` from where it stands (a run resumed after a crash skips the steps it
   * finished). `shutdown` aborts the model call and the delivery; the run then stays
   * unsummarised and resumes at the next start.
   */
  execute(run: RunRecord, shutdown: AbortSignal): Promise<void>;
}

type Turn = { readonly run: RunRecord; readonly messages: readonly SessionMessage[] };

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

  /** Writes a finished turn: the transcript (for a reply) and the run's final status. */
  function recordTurn(w: Writes, { run, messages }: Turn): void {
    const at = run.finishedAt ?? now();
    w.messages.append(run.sessionKey, messages, run.id, at);
    w.runs.finish(
      run.id,
      {
        status: run.status as 'ok' | 'error' | 'timeout',
        ...(run.output === undefined ? {} : { output: run.output }),
        ...(run.error === undefined ? {} : { error: run.error }),
      },
      at,
    );
  }

  /**
   * Runs the model turn and returns the finished run (not yet written) with the transcript
   * messages it adds, or undefined when shut down mid-call. Marking the run `running` joins the
   * next group commit: a crash before the result is written runs it again either way.
   */
  async function callModel(run: RunRecord, shutdown: AbortSignal): Promise<Turn | undefined> {
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
    const timeout = deadline(timeoutSeconds, shutdown, clock);
    const thinking = run.thinking ?? options.defaultThinking;
    const { messages, content } = requestOf(run, history, budgets.of(run.model, maxPromptChars));
    try {
      const reply = await completeWithRetries(
        models,
        run.model,
        { messages, ...(thinking ? { thinking } : {}), signal: timeout.signal },
        { clock, onFailure: recordAttempt(run) },
      );
      const turn: SessionMessage[] = [
        { role: 'user', content },
        { role: 'assistant', content: reply },
      ];
      return { run: { ...run, status: 'ok', output: reply, startedAt, finishedAt: now() }, messages: turn };
    } catch (err) {
      if (shutdown.aborted && !timeout.timedOut) return undefined;
      const status = timeout.timedOut ? 'timeout' : 'error';
      const error = errorOf(err, timeout.timedOut ? timeoutSeconds : undefined, run.model, charsOf(messages));
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
  function errorOf(err: unknown, timedOutAfter: number | undefined, model: string, sentChars: number): string {
    if (timedOutAfter !== undefined) {
      const unavailable = isHookdError(err, 'MODEL_UNAVAILABLE') ? { unavailable: err.message } : {};
      return hookdError('RUN_TIMED_OUT', { seconds: timedOutAfter, ...unavailable }).message;
    }
    if (!isHookdError(err, 'MODEL_CONTEXT_EXCEEDED')) return (err as Error).message;
    budgets.refused(model, sentChars);
    return hookdError('MODEL_CONTEXT_EXCEEDED', { ...err.params, sentChars }).message;
  }

  function deliveryOf(run: RunRecord, shutdown: AbortSignal): Promise<DeliveryOutcome> {
    if (!run.deliver) return Promise.resolve(delivery.skipped('deliver is false'));
    if (run.status !== 'ok') return Promise.resolve(delivery.skipped(`the run ended with ${run.status}`));
    const target = {
      channel: run.channel,
      runId: run.id,
      sessionKey: run.sessionKey,
      ...(run.to === undefined ? {} : { to: run.to }),
    };
    return delivery.deliver(target, run.output ?? '', shutdown, recordAttempt(run));
  }

  /**
   * Commits `write`, trying again with back-off while the store refuses it (a full disk, a
   * locked file): the run keeps its model reply and its delivery instead of being stuck
   * `running` until a restart. A failed commit rolled back, so trying again is safe. Only a
   * shutdown ends the tries; the run then resumes at the next start.
   */
  async function commit(runId: string, write: (w: Writes) => void, shutdown: AbortSignal): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await store.group.write(write);
        if (attempt > 0) log.info({ runId, attempts: attempt + 1 }, 'run write committed after retries');
        return;
      } catch (err) {
        if (shutdown.aborted) throw err;
        const retryInMs = backoffMs(attempt, WRITE_RETRY);
        log.error({ err, runId, attempt: attempt + 1, retryInMs }, 'run write failed; retrying');
        await clock.sleep(retryInMs, shutdown);
      }
    }
  }

  /** The turn (unless written before), the delivery outcome and the summary, in one commit. */
  function summarize(run: RunRecord, turn: Turn | undefined, outcome: DeliveryOutcome, shutdown: AbortSignal) {
    return commit(
      run.id,
      (w) => {
        if (turn) recordTurn(w, turn);
        if (!run.delivery) w.runs.recordDelivery(run.id, outcome);
        w.events.insert({
          id: `${run.id}:summary`,
          sessionKey: MAIN_SESSION,
          text: summaryText(run),
          origin: 'run-summary',
          allowUnsafeExternalContent: run.allowUnsafeExternalContent,
          contentSource: run.contentSource,
          createdAt: now(),
        });
        w.runs.markSummarized(run.id, now());
      },
      shutdown,
    );
  }

  return {
    async execute(queued, shutdown) {
      const fresh = queued.status === 'queued' || queued.status === 'running';
      const turn = fresh ? await callModel(queued, shutdown) : undefined;
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
          await commit(run.id, (w) => recordTurn(w, written), shutdown);
          unwritten = undefined;
        }
        outcome = await deliveryOf(run, shutdown);
        // Cut off by shutdown: left unsummarised, so the next start delivers it again.
        if (delivering && shutdown.aborted) return;
      }
      await summarize(run, unwritten, outcome, shutdown);
      options.onRunUpdate?.(run.id);
      log.info({ runId: run.id, status: run.status, delivery: outcome.status, why: outcome.reason }, 'run done');
      if (run.wakeMode === 'now') heartbeat.request();
    },
  };
}
