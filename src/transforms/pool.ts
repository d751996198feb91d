import { type HookdError, hookdError } from '../errors.js';
import type { BundleMap } from './locate.js';
import type { Sandbox } from './sandbox.js';
import { createSemaphore } from './semaphore.js';

/** A bundle and its source map (which its isolates locate their errors with). */
/** What a TRANSFORM_BUSY asks the sender to wait: the time limit, in whole seconds, at least 1. */
export const retryAfterFor = (timeoutMs: number): number => Math.max(1, Math.ceil(timeoutMs / 1000));

/** The bound of a mapping's calls at once, as TRANSFORM_BUSY names it. */
export const MAX_IN_FLIGHT = 'hooks.transforms.maxInFlight';

/** TRANSFORM_BUSY (503): mapping `mapping`'s call did not start, `running` already run under `limit`. */
export const transformBusy = (mapping: string, running: number, limit: string, retryAfterS: number): HookdError =>
  hookdError('TRANSFORM_BUSY', { mapping, running, limit }, { headers: { 'retry-after': String(retryAfterS) } });

export interface SandboxSource {
  readonly code: string;
  readonly map?: BundleMap;
}

/**
 * How the pool builds a sandbox for the code it currently runs: for a call (`waitMs`, what is
 * left of the call's wait), or for a swap (none).
 */
export type BuildSandbox = (source: SandboxSource, waitMs?: number) => Promise<Sandbox>;

export interface SandboxPoolOptions {
  /** The mapping id, named in TRANSFORM_BUSY. */
  readonly key: string;
  readonly code: string;
  readonly map?: BundleMap;
  readonly build: BuildSandbox;
  /** Calls running at once, at most (`hooks.transforms.maxInFlight`): one isolate each. */
  readonly maxInFlight: number;
  /** Calls waiting for a free isolate, at most; one more is TRANSFORM_BUSY at once. */
  readonly maxWaiting: number;
  /** What a TRANSFORM_BUSY asks the sender to wait. */
  readonly retryAfterS: number;
}

/**
 * A mapping's warm isolates, one call in each at a time (docs/operations.md#limits: `maxInFlight` per
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
  swap(code: string, map?: BundleMap): Promise<void>;
  dispose(): void;
}

export function createSandboxPool(options: SandboxPoolOptions): SandboxPool {
  const { key, maxInFlight } = options;
  let source: SandboxSource = { code: options.code, ...(options.map ? { map: options.map } : {}) };
  /** Isolates of the current code, not running a call. */
  let idle: Sandbox[] = [];
  /** Isolates handed out plus builds under way hold a slot: `maxInFlight` of them at most. */
  const slots = createSemaphore(maxInFlight, options.maxWaiting);
  /** Which code an isolate runs: bumped by each swap. */
  let generation = 0;
  const generationOf = new WeakMap<Sandbox, number>();
  /** Set by `dispose`: a swap that finishes later disposes what it built. */
  let disposed = false;

  const busyError = () => transformBusy(key, maxInFlight, MAX_IN_FLIGHT, options.retryAfterS);

  /** Builds one isolate for a slot already taken, within `waitMs`; a failed build gives the slot back. */
  async function build(waitMs: number): Promise<Sandbox> {
    const builtFor = generation;
    try {
      const sandbox = await options.build(source, waitMs);
      generationOf.set(sandbox, builtFor);
      return sandbox;
    } catch (err) {
      slots.release();
      throw err;
    }
  }

  return {
    get code() {
      return source.code;
    },
    get size() {
      return idle.length + slots.taken;
    },
    // Every isolate holds a slot or is idle, so an idle one always has a free slot.
    takeIdle() {
      return idle.length > 0 && slots.tryAcquire() ? idle.pop() : undefined;
    },
    async acquire(waitMs) {
      const started = performance.now();
      if (!(await slots.acquire(waitMs))) throw busyError();
      return idle.pop() ?? build(Math.max(0, waitMs - (performance.now() - started)));
    },
    release(sandbox) {
      if (sandbox.disposed || generationOf.get(sandbox) !== generation) sandbox.dispose();
      else idle.push(sandbox);
      slots.release();
    },
    async swap(code, map) {
      const next = { code, ...(map ? { map } : {}) };
      const sandbox = await options.build(next);
      if (disposed) {
        sandbox.dispose();
        return;
      }
      source = next;
      generationOf.set(sandbox, ++generation);
      for (const old of idle) old.dispose();
      idle = [sandbox];
    },
    dispose() {
      // Calls still running dispose their isolate on release (its generation is gone).
      disposed = true;
      generation++;
      slots.close();
      for (const sandbox of idle) sandbox.dispose();
      idle = [];
    },
  };
}
