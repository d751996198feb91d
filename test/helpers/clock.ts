import type * as TimersPromises from 'node:timers/promises';
import type { Cancel, Clock } from '../../src/clock.js';

/** A wait that code under test started with `setTimeout` from `node:timers/promises`. */
export interface Wait {
  readonly delayMs: number;
  /** True once its time has passed or its signal aborted it. */
  readonly ended: boolean;
}

/** Every wait started since the test file loaded, oldest first. */
export const waits: Wait[] = [];

// Captured before any test fakes the global timers.
const realSetTimeout = globalThis.setTimeout;

/**
 * `node:timers/promises` whose `setTimeout` runs on the global timers, for
 * `vi.mock('node:timers/promises', …)`: vitest's fake timers replace the global timers but not a
 * `setTimeout` imported by name from `node:timers/promises` (vitest-dev/vitest#10871). Each
 * wait is recorded in `waits`, so that a test sees what the code waits for before moving the clock.
 */
export function timersOnGlobalClock(real: typeof TimersPromises): typeof TimersPromises {
  function setTimeout<T = void>(delayMs = 1, value?: T, options: { signal?: AbortSignal } = {}): Promise<T> {
    const wait = { delayMs, ended: false };
    waits.push(wait);
    const { signal } = options;
    return new Promise<T>((resolve, reject) => {
      const abort = () => {
        wait.ended = true;
        globalThis.clearTimeout(timer);
        reject(
          Object.assign(new Error('The operation was aborted', { cause: signal?.reason }), { name: 'AbortError' }),
        );
      };
      const timer = globalThis.setTimeout(() => {
        wait.ended = true;
        signal?.removeEventListener('abort', abort);
        resolve(value as T);
      }, delayMs);
      if (signal?.aborted) abort();
      else signal?.addEventListener('abort', abort, { once: true });
    });
  }
  return { ...real, setTimeout };
}

/**
 * Waits in real time until `predicate` holds, without moving a fake clock (`vi.waitFor`,
 * `vi.waitUntil` and `expect.poll` advance fake timers on every check).
 */
export async function until(predicate: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!predicate()) {
    if (performance.now() > deadline) throw new Error(`not reached within ${timeoutMs} ms: ${predicate}`);
    await new Promise((resolve) => realSetTimeout(resolve, 5));
  }
}

/** A clock a test moves by hand (`advance`), for code that takes a `Clock`. */
export interface ManualClock extends Clock {
  /**
   * Moves time `ms` forward, firing every timer that falls due, in order, each at its own
   * time; promise callbacks and I/O already done run between timers.
   */
  advance(ms: number): Promise<void>;
  /**
   * Sets the wall clock `ms` forward (backward when negative), as an operator or NTP steps a
   * system's clock: `now()` moves, `monotonic()` and the timers do not.
   */
  stepWall(ms: number): void;
  /** Timers set and not yet fired or cancelled. */
  readonly pending: number;
}

interface ManualTimer {
  at: number;
  readonly seq: number;
  readonly fn: () => void;
  readonly everyMs?: number;
  cancelled: boolean;
}

/** Lets promise callbacks and finished I/O run (a few turns of the event loop, no clock time). */
export const settle = async (turns = 5): Promise<void> => {
  for (let i = 0; i < turns; i++) await new Promise((resolve) => setImmediate(resolve));
};

/** A manual clock starting at `startMs`. */
export function createManualClock(startMs = 1_800_000_000_000): ManualClock {
  let now = startMs;
  // The wall clock's distance from the monotonic one: 0 until `stepWall`.
  let stepped = 0;
  let seq = 0;
  const timers: ManualTimer[] = [];
  const add = (fn: () => void, ms: number, everyMs?: number): Cancel => {
    const timer: ManualTimer = {
      at: now + Math.max(0, ms),
      seq: seq++,
      fn,
      cancelled: false,
      ...(everyMs === undefined ? {} : { everyMs: Math.max(1, everyMs) }),
    };
    timers.push(timer);
    return () => {
      timer.cancelled = true;
    };
  };
  const due = (until: number) =>
    timers.filter((t) => !t.cancelled && t.at <= until).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
  return {
    now: () => now + stepped,
    monotonic: () => now,
    setTimeout: (fn, ms) => add(fn, ms),
    setInterval: (fn, ms) => add(fn, ms, ms),
    sleep(ms, signal) {
      return new Promise<void>((resolve, reject) => {
        const abort = () => {
          cancel();
          reject(
            Object.assign(new Error('The operation was aborted', { cause: signal?.reason }), { name: 'AbortError' }),
          );
        };
        const cancel = add(() => {
          signal?.removeEventListener('abort', abort);
          resolve();
        }, ms);
        if (signal?.aborted) abort();
        else signal?.addEventListener('abort', abort, { once: true });
      });
    },
    async advance(ms) {
      const end = now + ms;
      await settle();
      for (let next = due(end); next; next = due(end)) {
        now = Math.max(now, next.at);
        if (next.everyMs === undefined) next.cancelled = true;
        else next.at += next.everyMs;
        next.fn();
        await settle();
      }
      now = end;
      for (let i = timers.length - 1; i >= 0; i--) if (timers[i]?.cancelled) timers.splice(i, 1);
    },
    stepWall(ms) {
      stepped += ms;
    },
    get pending() {
      return timers.filter((t) => !t.cancelled).length;
    },
  };
}
