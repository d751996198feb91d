import { isHookdError } from '../../errors.js';
import type { RunAttempt } from '../../store/index.js';
import type { AttemptKind } from '../../views.js';

/** The longest error text an attempt keeps (docs/runtime.md#attempts). */
export const ATTEMPT_ERROR_CHARS = 300;

/** A failed try of a model call or a delivery, as the runtime records it on its run. */
export type Attempt = Omit<RunAttempt, 'runId'>;

/** What a failed try was to, as its log line names it: the model it called or the channel it sent to. */
export type TryTarget = { readonly model: string } | { readonly channel: string };

/** Told of a failed try as it fails, with what it was to. */
export type OnFailure = (attempt: Attempt, target: TryTarget) => void;

/** What a failed try tells its retry loop, and what its attempt records. */
export interface Failure {
  readonly outcome: string;
  readonly status?: number;
  readonly error?: string;
  /** True when the same try may succeed later (429, 5xx, a network error). */
  readonly transient: boolean;
  /** How long the server asked to wait before the next try. */
  readonly retryAfterMs?: number;
}

const cut = (text: string) => text.slice(0, ATTEMPT_ERROR_CHARS);
const transientStatus = (status: number) => status === 429 || status >= 500;
const after = (ms: number | undefined) => (ms === undefined ? {} : { retryAfterMs: ms });

/**
 * How a try failed, from the error a provider or channel rejected with (their messages and
 * excerpts hold no secrets, docs/runtime.md#attempts). Anything else is not retried.
 */
export function failureOf(err: unknown): Failure {
  if (isHookdError(err, 'MODEL_REFUSED', 'MODEL_CONTEXT_EXCEEDED')) {
    const { status, excerpt } = err.params;
    const retryAfterMs = isHookdError(err, 'MODEL_REFUSED') ? err.params.retryAfterMs : undefined;
    const transient = err.code === 'MODEL_REFUSED' && transientStatus(status);
    return { outcome: err.code, status, error: cut(excerpt), transient, ...after(retryAfterMs) };
  }
  if (isHookdError(err, 'CHANNEL_REFUSED')) {
    const { status, description, retryAfterMs, protocol } = err.params;
    // A kind whose statuses are not HTTP's (SMTP's 4xx are the transient ones) says so itself.
    const transient = err.params.transient ?? transientStatus(status);
    // An attempt's status is an HTTP status (docs/runtime.md#attempts): another protocol's code leads its text.
    if (protocol) return { outcome: err.code, error: cut(err.message), transient, ...after(retryAfterMs) };
    const error = description === undefined ? {} : { error: cut(description) };
    return { outcome: err.code, status, ...error, transient, ...after(retryAfterMs) };
  }
  if (isHookdError(err, 'MODEL_UNREACHABLE', 'CHANNEL_UNREACHABLE'))
    return { outcome: err.code, error: cut(err.params.reason), transient: true };
  if (isHookdError(err, 'CHANNEL_UNCONFIRMED'))
    return { outcome: err.code, error: cut(err.params.excerpt), transient: false };
  if (isHookdError(err)) return { outcome: err.code, error: cut(err.message), transient: false };
  return { outcome: 'INTERNAL', error: cut(err instanceof Error ? err.message : String(err)), transient: false };
}

/** A try its time limit cut after `ms` with no answer: a failure, as a network error is. */
export function unanswered(outcome: 'MODEL_UNREACHABLE' | 'CHANNEL_UNREACHABLE', ms: number): Failure {
  return { outcome, error: noAnswerIn(ms), transient: true };
}

/** What an unanswered try says of itself: `no answer in 15 s`. */
export const noAnswerIn = (ms: number) => `no answer in ${Math.round(ms / 1000)} s`;

/** An attempt as the record of a try: its time, kind and number with the failure's fields. */
export function attemptOf(failure: Failure, kind: AttemptKind, n: number, at: number): Attempt {
  return {
    at,
    kind,
    n,
    outcome: failure.outcome,
    ...(failure.status === undefined ? {} : { status: failure.status }),
    ...(failure.error === undefined ? {} : { error: failure.error }),
  };
}

/** What went wrong in a few words: `HTTP 500 <the answer's start>`, or the network error. */
export function lastText(attempt: Pick<Attempt, 'status' | 'error' | 'outcome'>): string {
  if (attempt.status !== undefined) return `HTTP ${attempt.status} ${attempt.error ?? ''}`.trim();
  return attempt.error ?? attempt.outcome;
}

/**
 * A failed try in hookd's own words (alerts, breakers): its code and status; for a network
 * failure the network's own error. A server's answer is left out: it may repeat what it was sent.
 */
export function tryError(failure: Failure): string {
  const status = failure.status === undefined ? '' : ` (HTTP ${failure.status})`;
  const network = failure.outcome.endsWith('_UNREACHABLE') && failure.error ? `: ${failure.error}` : '';
  return `${failure.outcome}${status}${network}`;
}
