import { type Clock, systemClock } from '../clock.js';

/** setTimeout's ceiling (about 24.8 days); a longer delay fires at once, and a fraction is not a timer. */
const MAX_TIMER_MS = 2_147_483_647;

/** A model call's signal: aborted after its time limit or by the shutdown, whichever comes first. */
export interface Deadline {
  readonly signal: AbortSignal;
  /** True when the time limit, not the shutdown, aborted it. */
  readonly timedOut: boolean;
  /** Clears the timer and the shutdown listener once the call ended (call it in `finally`). */
  done(): void;
}

/** Why a deadline aborted its signal: its time limit came. A `TimeoutError`, as `AbortSignal.timeout`'s reason is. */
class TimeUp extends DOMException {
  constructor(readonly limitMs: number) {
    super('The operation timed out', 'TimeoutError');
  }
}

/**
 * A deadline of `seconds` (fractions rounded up to a millisecond, clamped to the timer range)
 * tied to `shutdown`. Unlike `AbortSignal.timeout` joined by `AbortSignal.any`, nothing outlives
 * the call: those kept a 600 s timer and a link on the long-lived shutdown signal per run, and
 * cost about 20 µs each.
 */
export function deadline(seconds: number, shutdown: AbortSignal, clock: Clock = systemClock): Deadline {
  const controller = new AbortController();
  let timedOut = false;
  const onShutdown = () => controller.abort(shutdown.reason);
  const ms = Math.min(MAX_TIMER_MS, Math.max(1, Math.ceil(seconds * 1000)));
  const cancel = clock.setTimeout(() => {
    timedOut = true;
    controller.abort(new TimeUp(ms));
  }, ms);
  if (shutdown.aborted) onShutdown();
  else shutdown.addEventListener('abort', onShutdown, { once: true });
  return {
    signal: controller.signal,
    get timedOut() {
      return timedOut;
    },
    done() {
      cancel();
      shutdown.removeEventListener('abort', onShutdown);
    },
  };
}

/**
 * True when a deadline's time limit aborted `signal` (its reason is a `TimeoutError`, as
 * `AbortSignal.timeout`'s is), not the shutdown or the operator's cancel.
 */
export function isTimeUp(signal: AbortSignal): boolean {
  return signal.aborted && signal.reason instanceof DOMException && signal.reason.name === 'TimeoutError';
}

/**
 * True when `signal`'s deadline cut a try that had been in flight `triedMs`, at least half the
 * deadline's time: a server that left it unanswered so long failed it, as one that refused the
 * connection would have. A try cut sooner (its call's time went on waiting for a slot, or on
 * earlier tries) says nothing of the server, and neither does a shutdown or a cancel.
 */
export function cutUnanswered(signal: AbortSignal, triedMs: number): boolean {
  const { reason } = signal;
  return signal.aborted && reason instanceof TimeUp && triedMs >= reason.limitMs / 2;
}
