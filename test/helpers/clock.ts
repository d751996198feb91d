import type * as TimersPromises from 'node:timers/promises';

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
export async function until(predicate: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!predicate()) {
    if (performance.now() > deadline) throw new Error(`not reached within ${timeoutMs} ms: ${predicate}`);
    await new Promise((resolve) => realSetTimeout(resolve, 5));
  }
}
