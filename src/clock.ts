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

/** A moment on both of a clock's clocks. */
export interface Stamp {
  readonly monotonic: number;
  readonly wall: number;
}

/** Now, on both clocks. */
export const stampOf = (clock: Clock): Stamp => ({ monotonic: clock.monotonic(), wall: clock.now() });

/**
 * How much of `ms` from `since` is left, by whichever clock says less: a deadline this process
 * keeps for itself (a lease's end, which the database counts on its own clock) is neither
 * extended by the system's clock set back (the monotonic clock goes on) nor by time the machine
 * spent suspended, which the monotonic clock does not count (the wall clock does).
 */
export function timeLeft(since: Stamp, ms: number, clock: Clock): number {
  return timeLeftAt(since, ms, stampOf(clock));
}

/** `timeLeft` at the moment `now`, read once for several deadlines (a breaker's, at one dispatch). */
export function timeLeftAt(since: Stamp, ms: number, now: Stamp): number {
  return Math.min(since.monotonic + ms - now.monotonic, since.wall + ms - now.wall);
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
