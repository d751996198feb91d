import { hookdError, isHookdError } from '../errors.js';
import type { ConsoleSink } from './console.js';
import type { BundleMap } from './locate.js';
import { createSandboxPool } from './pool.js';
import { createSandbox, type Sandbox, type SandboxLimits } from './sandbox.js';
import type { Semaphore } from './semaphore.js';

/**
 * How long one call may hold the event loop. A call on the loop costs a few microseconds; on
 * isolated-vm's own thread about 60 µs more CPU, but hook answers go on meanwhile (docs/transforms.md#limits).
 * A call that needs more than this slice is cut off and run again off the loop. Measured (A/B, 6
 * interleaved rounds, 50 connections on a small transform): on the loop every request answered
 * 2xx at 7,757 req/s; with every call off the loop, 95 % were refused 503 TRANSFORM_BUSY (one
 * call per spare core runs off the loop).
 */
export const ON_LOOP_SLICE_MS = 5;
/**
 * Once a call of a mapping spent the slice in CPU time (not wall time, which a busy machine
 * stretches), its calls run off the loop this long, renewed by every such call.
 */
export const OFF_LOOP_FOR_MS = 10_000;
/**
 * An isolate's first calls do not count towards leaving the loop: V8 compiles the transform as
 * it runs, and a bench's cold start sent a quick transform off the loop (at 57 % of its warm
 * rate) for the whole window. A call cut at the slice keeps its isolate, so a transform that
 * really spins is off the loop after this many slices.
 */
export const COLD_CALLS = 3;
/**
 * A warm isolate's call now and then spends the slice on its own garbage collection (12 ms
 * seen once in 538 calls of a quick transform): the loop is left after a second slow call
 * within this window, not the first; while off the loop, one slow call renews the stay.
 */
export const SLOW_CALLS_WINDOW_MS = 1000;

/** One mapping's transform: its current code and the warm isolates running it. */
export interface TransformSlot {
  /** The mapping id it runs under. */
  readonly key: string;
  /** The module's real path when it was loaded. */
  readonly file: string;
  /** `transform.module` as configured (resolved again, with its containment, on every reload). */
  readonly module: string;
  /** The folder it is contained in: `hooks.transformsDir`, or its preset's folder. */
  readonly root: string;
  readonly code: string;
  /** Isolates alive. */
  readonly isolates: number;
  /** Whether calls run off the event loop now (a recent call needed more than the slice). */
  readonly offLoop: boolean;
  /** Loads one isolate now: a module that throws at load stops start-up, and first calls are warm. */
  warm(): Promise<void>;
  /**
   * Runs one call within `timeoutMs`, the wait for a free isolate included: over `maxInFlight`
   * calls it waits, then TRANSFORM_BUSY; the call's own failures are TRANSFORM_FAILED.
   */
  call(json: string, rawBody: string, timeoutMs: number): Promise<string>;
  /**
   * Swaps in newer code (and its source map) once an isolate of it has loaded (throws, keeping
   * the old code, when it does not load); calls already running on old isolates finish there.
   */
  swap(code: string, map?: BundleMap): Promise<void>;
  dispose(): void;
}

export interface TransformSlotOptions {
  readonly key: string;
  readonly file: string;
  readonly module: string;
  readonly root: string;
  readonly exportName: string | undefined;
  readonly code: string;
  /** The bundle's source map: a failure is reported at the author's file:line:column. */
  readonly map?: BundleMap;
  readonly limits: SandboxLimits & { readonly maxInFlight: number };
  readonly console: ConsoleSink;
  /** Told when the mapping's calls move off the event loop. */
  readonly onLeaveLoop?: () => void;
  /** Bounds the calls running off the loop across mappings (none: as many as `maxInFlight`). */
  readonly gate?: Semaphore;
}

const timedOut = (err: unknown): boolean =>
  isHookdError(err, 'TRANSFORM_FAILED') && err.params.timedOutAfterMs !== undefined;

/** Creates a slot; its first isolate is built by `warm()` or the first call. */
export function createTransformSlot(options: TransformSlotOptions): TransformSlot {
  const { exportName, limits, console } = options;
  const retryAfterS = Math.max(1, Math.ceil(limits.timeoutMs / 1000));
  let warmed = false;
  const pool = createSandboxPool({
    key: options.key,
    code: options.code,
    ...(options.map ? { map: options.map } : {}),
    // The first isolate loads on this thread (start-up); later ones, built while serving, off it.
    build: ({ code, map }) =>
      createSandbox(code, exportName, limits, console, { offThread: warmed, ...(map ? { map } : {}) }),
    maxInFlight: limits.maxInFlight,
    maxWaiting: limits.maxInFlight,
    retryAfterS,
  });
  const { gate } = options;
  let offLoopUntil = 0;

  let lastSlowCall = Number.NEGATIVE_INFINITY;

  /** Counts a call that spent the slice in CPU time, past its isolate's cold calls. */
  function slowCall(sandbox: Sandbox, thresholdMs: number): void {
    if (sandbox.calls <= COLD_CALLS || sandbox.lastCallCpuMs < thresholdMs) return;
    const now = performance.now();
    const off = now < offLoopUntil;
    if (off || now - lastSlowCall <= SLOW_CALLS_WINDOW_MS) {
      if (!off) options.onLeaveLoop?.();
      offLoopUntil = now + OFF_LOOP_FOR_MS;
    }
    lastSlowCall = now;
  }

  /** The call on the loop, cut at the slice; undefined when it needs to run again off the loop. */
  function onLoop(sandbox: Sandbox, json: string, rawBody: string, budgetMs: number): string | undefined {
    const slice = Math.min(ON_LOOP_SLICE_MS, budgetMs);
    try {
      return sandbox.callSync(json, rawBody, slice, slice < budgetMs ? { cut: true } : undefined);
    } catch (err) {
      if (!timedOut(err) || slice >= budgetMs) throw err;
      // Cut while mostly waiting for a core, or while cold, or once: only this call runs again off the loop.
      slowCall(sandbox, slice / 2);
      return undefined;
    }
  }

  async function offLoop(sandbox: Sandbox, json: string, rawBody: string, budgetMs: () => number): Promise<string> {
    if (gate && !(await gate.acquire(budgetMs()))) {
      const limit = 'off the event loop, one per spare core';
      const params = { mapping: options.key, running: gate.slots, limit };
      throw hookdError('TRANSFORM_BUSY', params, { headers: { 'retry-after': String(retryAfterS) } });
    }
    try {
      return await sandbox.callAsync(json, rawBody, budgetMs());
    } finally {
      gate?.release();
      slowCall(sandbox, ON_LOOP_SLICE_MS);
    }
  }

  return {
    key: options.key,
    file: options.file,
    module: options.module,
    root: options.root,
    get code() {
      return pool.code;
    },
    get isolates() {
      return pool.size;
    },
    get offLoop() {
      return performance.now() < offLoopUntil;
    },
    async warm() {
      pool.release(await pool.acquire(0));
      warmed = true;
    },
    async call(json, rawBody, timeoutMs) {
      const started = performance.now();
      const left = () => Math.max(1, Math.ceil(timeoutMs - (performance.now() - started)));
      try {
        if (performance.now() >= offLoopUntil) {
          // Taken without a wait when one is idle: calls on the loop run one after another.
          const sandbox = pool.takeIdle() ?? (await pool.acquire(left()));
          let answer: string | undefined;
          try {
            answer = onLoop(sandbox, json, rawBody, left());
          } finally {
            pool.release(sandbox);
          }
          if (answer !== undefined) return answer;
        }
        const sandbox = await pool.acquire(left());
        try {
          return await offLoop(sandbox, json, rawBody, left);
        } finally {
          pool.release(sandbox);
        }
      } catch (err) {
        // The whole budget is what timed out, however it was split between the loop and off it.
        if (timedOut(err)) {
          throw hookdError('TRANSFORM_FAILED', {
            reason: `timed out after ${timeoutMs} ms`,
            timedOutAfterMs: timeoutMs,
          });
        }
        throw err;
      }
    },
    swap(code, map) {
      return pool.swap(code, map);
    },
    dispose() {
      pool.dispose();
    },
  };
}
