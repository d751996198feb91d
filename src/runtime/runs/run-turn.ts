import type { ThinkingLevel } from '../../action-shape.js';
import { startsItsSession } from '../../actions/index.js';
import type { Clock } from '../../clock.js';
import { hookdError, isHookdError } from '../../errors.js';
import type { Logger } from '../../log.js';
import { LINGER, type RunRecord, type SessionMessage, type StoreContract } from '../../store/index.js';
import {
  charsOf,
  completeWithRetries,
  type createAttemptRecorder,
  historyWithin,
  type PromptBudgets,
  shortened,
  type TryGate,
} from '../attempts/index.js';
import type { ModelRouter } from '../ports.js';
import { findInjectionPhrases, wrapExternalContent } from '../safety/index.js';
import { deadline } from '../timeout.js';
import type { Turn } from './run-commits.js';

/** What a run's model turn needs: where it reads and writes, the model port, and its bounds. */
export interface TurnParts {
  readonly store: StoreContract;
  readonly models: ModelRouter;
  readonly log: Logger;
  readonly clock: Clock;
  /** Transcript messages sent as history (the newest ones). */
  readonly historyLimit: number;
  /** The whole model request (history and message), in characters, at most. */
  readonly maxPromptChars: number;
  readonly budgets: PromptBudgets;
  readonly recordAttempt: ReturnType<typeof createAttemptRecorder>;
  readonly defaultTimeoutSeconds: number;
  readonly defaultThinking: ThinkingLevel | undefined;
  readonly onRunUpdate: ((runId: string) => void) | undefined;
}

/** What a model turn runs under: the run's signal, where its tries take slots, and what it waits for. */
export interface TurnContext {
  readonly signal: AbortSignal;
  readonly gate: TryGate;
  readonly waiting?: () => string | undefined;
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

/** How a failed model call of a run ended: timed out after `timedOutAfter` seconds (with what it waited for), or not. */
export interface TurnFailure {
  readonly timedOutAfter: number | undefined;
  readonly waited: string | undefined;
  readonly model: string;
  /** The characters the request sent. */
  readonly sentChars: number;
}

/**
 * A failed run's error text. A context-length refusal says how much was sent, and makes the
 * model's later requests smaller (docs/runtime.md#context-length).
 */
export function runErrorOf(err: unknown, failure: TurnFailure, budgets: PromptBudgets): string {
  const { timedOutAfter, waited } = failure;
  if (timedOutAfter !== undefined) {
    const failed = isHookdError(err, 'MODEL_UNAVAILABLE') ? err.message : undefined;
    const why = failed !== undefined && waited !== undefined ? `${failed}; ${waited}` : (failed ?? waited);
    const unavailable = why === undefined ? {} : { unavailable: why };
    return hookdError('RUN_TIMED_OUT', { seconds: timedOutAfter, ...unavailable }).message;
  }
  if (!isHookdError(err, 'MODEL_CONTEXT_EXCEEDED')) return (err as Error).message;
  budgets.refused(failure.model, failure.sentChars);
  return hookdError('MODEL_CONTEXT_EXCEEDED', { ...err.params, sentChars: failure.sentChars }).message;
}

/** Marks `run` running in the next group commit; the live log is told once it is written. */
function markRunning(parts: TurnParts, run: RunRecord, startedAt: number): void {
  parts.store.group
    .write((w) => w.runs.markRunning(run.id, startedAt), LINGER)
    .then(
      () => parts.onRunUpdate?.(run.id),
      (err: unknown) => parts.log.error({ err, runId: run.id }, 'marking a run running failed'),
    );
}

/**
 * Runs the model turn and returns the finished run (not yet written) with the transcript
 * messages it adds, or undefined when shut down or cancelled mid-call. Marking the run
 * `running` joins the next group commit: a crash before the result is written runs it again
 * either way.
 */
export async function callModel(parts: TurnParts, run: RunRecord, context: TurnContext): Promise<Turn | undefined> {
  const { clock, log } = parts;
  const startedAt = clock.now();
  markRunning(parts, run, startedAt);
  const phrases = findInjectionPhrases(run.message);
  if (phrases.length > 0) log.warn({ runId: run.id, phrases }, 'possible prompt injection in hook content');
  const history = startsItsSession(run) ? [] : await parts.store.messages.recent(run.sessionKey, parts.historyLimit);
  const timeoutSeconds = run.timeoutSeconds ?? parts.defaultTimeoutSeconds;
  const timeout = deadline(timeoutSeconds, context.signal, clock);
  const thinking = run.thinking ?? parts.defaultThinking;
  const { messages, content } = requestOf(run, history, parts.budgets.of(run.model, parts.maxPromptChars));
  try {
    const reply = await completeWithRetries(
      parts.models,
      run.model,
      { messages, ...(thinking ? { thinking } : {}), signal: timeout.signal },
      { clock, onFailure: parts.recordAttempt(run), gate: context.gate },
    );
    const turn: SessionMessage[] = [
      { role: 'user', content },
      { role: 'assistant', content: reply },
    ];
    return { run: { ...run, status: 'ok', output: reply, startedAt, finishedAt: clock.now() }, messages: turn };
  } catch (err) {
    if (context.signal.aborted && !timeout.timedOut) return undefined;
    const status = timeout.timedOut ? 'timeout' : 'error';
    const failure = {
      timedOutAfter: timeout.timedOut ? timeoutSeconds : undefined,
      waited: timeout.timedOut ? context.waiting?.() : undefined,
      model: run.model,
      sentChars: charsOf(messages),
    };
    const error = runErrorOf(err, failure, parts.budgets);
    log.warn({ runId: run.id, mapping: run.mappingId, status, error }, 'run failed');
    // A failed turn adds nothing to the transcript, but its status is still written.
    return { run: { ...run, status, error, startedAt, finishedAt: clock.now() }, messages: [] };
  } finally {
    timeout.done();
  }
}
