import { type BackoffBounds, backoffMs } from '../../backoff.js';
import type { Clock } from '../../clock.js';
import { hookdError } from '../../errors.js';
import { modelTarget, type Permit } from '../isolation/index.js';
import type { CompletionRequest, ModelRouter } from '../ports.js';
import { cutUnanswered } from '../timeout.js';
import {
  type Attempt,
  attemptOf,
  type Failure,
  failureOf,
  lastText,
  type OnFailure,
  tryError,
  unanswered,
} from './attempt.js';
import { OPEN_GATE, type TryGate } from './gate.js';

/** Between model tries: 250 ms doubling to 5 s, unless the server says (`Retry-After`). */
export const MODEL_BACKOFF: BackoffBounds = { minMs: 250, maxMs: 5_000 };

export interface ModelTryOptions {
  /** Waits between tries, and stamps attempts. */
  readonly clock: Clock;
  /** Told of every failed try as it fails (a try cut by a shutdown or a cancel is none). */
  readonly onFailure?: OnFailure;
  /** Where each try takes its slot (the runtime's slots and the model's breaker); none: no wait. */
  readonly gate?: TryGate;
}

/**
 * Calls `ref` until it answers (docs/runtime.md#attempts): 429, 5xx and network errors are tried
 * again after a back-off on the clock, until `request.signal` aborts; then it rejects with
 * MODEL_UNAVAILABLE (how many tries failed, and the last failure) when any did, else with the
 * signal's reason. A try in flight for half the signal's time limit or more when the limit
 * comes is a failed one (MODEL_UNREACHABLE, `no answer in N s`): a server that takes
 * connections and never answers opens its breaker and its alert as one that refuses them does.
 * Any other failure, a context-length refusal included, rejects at once. Each try holds a slot
 * of `gate` while in flight, and only then (docs/runtime.md#fault-isolation).
 */
export async function completeWithRetries(
  models: ModelRouter,
  ref: string,
  request: Omit<CompletionRequest, 'model'>,
  options: ModelTryOptions,
): Promise<string> {
  const { signal } = request;
  const gate = options.gate ?? OPEN_GATE;
  let last: Attempt | undefined;
  // Cut off after failures: the failures, not only the cut, are the news.
  const cutOff = () =>
    last === undefined
      ? signal.reason
      : hookdError('MODEL_UNAVAILABLE', { attempts: last.n, last: lastText(last) }, { cause: signal.reason });
  for (let n = 1; ; n++) {
    let failure: Failure;
    let permit: Permit;
    try {
      permit = await gate.acquire(modelTarget(ref), signal);
    } catch {
      throw cutOff();
    }
    const triedAt = options.clock.monotonic();
    try {
      const reply = await models.complete(ref, request);
      permit.release('ok');
      return reply;
    } catch (err) {
      // Cut by the call's time limit after half of it or more: unanswered that long, a failure
      // as a network error is (its breaker, its alert and the run's attempts count it). Cut
      // otherwise (sooner, a shutdown, a cancel): nothing is said of the server.
      const triedMs = options.clock.monotonic() - triedAt;
      const unansweredTry = cutUnanswered(signal, triedMs);
      if (signal.aborted && !unansweredTry) {
        permit.release('cut');
        throw cutOff();
      }
      failure = unansweredTry ? unanswered('MODEL_UNREACHABLE', triedMs) : failureOf(err);
      permit.release(failure.transient ? 'failed' : 'refused', tryError(failure));
      last = attemptOf(failure, 'model', n, options.clock.now());
      options.onFailure?.(last, { model: ref });
      if (signal.aborted) throw cutOff();
      if (!failure.transient) throw err;
    }
    try {
      await options.clock.sleep(failure.retryAfterMs ?? backoffMs(n - 1, MODEL_BACKOFF), signal);
    } catch {
      throw cutOff();
    }
  }
}
