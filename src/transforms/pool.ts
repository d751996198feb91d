import { hookdError } from '../errors.js';
import type { Sandbox } from './sandbox.js';

/** How the pool builds a sandbox for the code it currently runs. */
export type BuildSandbox = (code: string) => Promise<Sandbox>;

export interface SandboxPoolOptions {
  /** The mapping id, named in TRANSFORM_BUSY. */
  readonly key: string;
  readonly code: string;
  readonly build: BuildSandbox;
  /** Calls running at once, at most (`hooks.transforms.maxInFlight`): one isolate each. */
  readonly maxInFlight: number;
  /** Calls waiting for a free isolate, at most; one more is TRANSFORM_BUSY at once. */
  readonly maxWaiting: number;
  /** What a TRANSFORM_BUSY asks the sender to wait. */
  readonly retryAfterS: number;
}

/**
 * A mapping's warm isolates, one call in each at a time (DESIGN §16: `maxInFlight` per
 * mapping, a bounded wait behind it). An isolate that timed out or ran out of memory is
 * disposed by its call and replaced by the next build; after a swap, isolates of the old code
 * finish the call they run and go.
 */
export interface SandboxPool {
  readonly code: string;
  /** Isolates alive (idle or running a call). */
  readonly size: number;
  /**
   * A free isolate, built when fewer than `maxInFlight` exist; waits at most `waitMs` behind
   * the calls running, then TRANSFORM_BUSY (503 + Retry-After), as when the queue is full.
   */
  acquire(waitMs: number): Promise<Sandbox>;
  /** An idle isolate at once, if one is (a call on the event loop needs no wait). */
  takeIdle(): Sandbox | undefined;
  /** Gives an isolate back after its call (a disposed one, or one of older code, is dropped). */
  release(sandbox: Sandbox): void;
  /** Builds one isolate of `code` (throws when it does not load), then makes it the pool's code. */
  swap(code: string): Promise<void>;
  dispose(): void;
}

type Waiter = { resolve(sandbox: Sandbox): void; reject(err: unknown): void; timer: NodeJS.Timeout };

export function createSandboxPool(options: SandboxPoolOptions): SandboxPool {
  const { key, maxInFlight, maxWaiting } = options;
  let code = options.code;
  /** Isolates of the current code, not running a call. */
  let idle: Sandbox[] = [];
  /** Isolates handed out plus builds under way: the in-flight count `maxInFlight` bounds. */
  let busy = 0;
  const waiters: Waiter[] = [];
  /** Which code an isolate runs: bumped by each swap. */
  let generation = 0;
  const generationOf = new WeakMap<Sandbox, number>();
  let closed = false;

  const busyError = () =>
    hookdError(
      'TRANSFORM_BUSY',
      { mapping: key, running: maxInFlight, limit: 'hooks.transforms.maxInFlight' },
      { headers: { 'retry-after': String(options.retryAfterS) } },
    );

  /** Builds one isolate for a slot already counted in `busy`. */
  async function build(): Promise<Sandbox> {
    const builtFor = generation;
    try {
      const sandbox = await options.build(code);
      generationOf.set(sandbox, builtFor);
      return sandbox;
    } catch (err) {
      busy--;
      // A failed build frees its slot: a waiter may build in it.
      serveWaiter();
      throw err;
    }
  }

  /** Hands a free slot to the oldest waiter, building an isolate for it when none is idle. */
  function serveWaiter(): void {
    const waiter = waiters.shift();
    if (!waiter) return;
    clearTimeout(waiter.timer);
    busy++;
    const ready = idle.pop();
    if (ready) waiter.resolve(ready);
    else build().then(waiter.resolve, waiter.reject);
  }

  return {
    get code() {
      return code;
    },
    get size() {
      return idle.length + busy;
    },
    takeIdle() {
      const ready = closed ? undefined : idle.pop();
      if (ready) busy++;
      return ready;
    },
    acquire(waitMs) {
      if (closed) return Promise.reject(busyError());
      const ready = idle.pop();
      if (ready) {
        busy++;
        return Promise.resolve(ready);
      }
      if (busy < maxInFlight) {
        busy++;
        return build();
      }
      if (waiters.length >= maxWaiting || waitMs <= 0) return Promise.reject(busyError());
      return new Promise<Sandbox>((resolve, reject) => {
        const waiter: Waiter = {
          resolve,
          reject,
          timer: setTimeout(() => {
            waiters.splice(waiters.indexOf(waiter), 1);
            reject(busyError());
          }, waitMs),
        };
        waiters.push(waiter);
      });
    },
    release(sandbox) {
      busy--;
      if (closed || sandbox.disposed || generationOf.get(sandbox) !== generation) sandbox.dispose();
      else idle.push(sandbox);
      if (busy < maxInFlight) serveWaiter();
    },
    async swap(next) {
      const sandbox = await options.build(next);
      code = next;
      generationOf.set(sandbox, ++generation);
      for (const old of idle) old.dispose();
      idle = [sandbox];
    },
    dispose() {
      closed = true;
      for (const sandbox of idle) sandbox.dispose();
      idle = [];
      for (const waiter of waiters.splice(0)) {
        clearTimeout(waiter.timer);
        waiter.reject(busyError());
      }
    },
  };
}
