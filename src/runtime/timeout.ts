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
  const cancel = clock.setTimeout(
    () => {
      timedOut = true;
      controller.abort(new DOMException('The operation timed out', 'TimeoutError'));
    },
    Math.min(MAX_TIMER_MS, Math.max(1, Math.ceil(seconds * 1000))),
  );
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
