import { setTimeout as sleepFor } from 'node:timers/promises';

/** Stops a timer; calling it again, or after the timer fired, does nothing. */
export type Cancel = () => void;

/**
 * Time as the runtime reads and waits on it: leases, the job owner, heartbeats, spacing and
 * retries all go through one clock, so that a test moves time instead of sleeping. Timers
 * never hold the process open.
 */
export interface Clock {
  /** Milliseconds since the epoch: what is written down and shown. */
  now(): number;
  /**
   * Milliseconds from an arbitrary start that the system's clock being set never moves: what a
   * deadline this process keeps for itself (a lease's end) is measured on.
   */
  monotonic(): number;
  /** Calls `fn` once, `ms` from now. */
  setTimeout(fn: () => void, ms: number): Cancel;
  /** Calls `fn` every `ms`. */
  setInterval(fn: () => void, ms: number): Cancel;
  /** Resolves `ms` from now; rejects with an AbortError when `signal` aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** The process's own clock and timers. */
export const systemClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  setTimeout(fn, ms) {
    const timer = setTimeout(fn, ms);
    timer.unref();
    return () => clearTimeout(timer);
  },
  setInterval(fn, ms) {
    const timer = setInterval(fn, ms);
    timer.unref();
    return () => clearInterval(timer);
  },
  sleep: (ms, signal) => sleepFor(ms, undefined, signal ? { signal, ref: false } : { ref: false }),
};
