import { hookdError, isHookdError } from '../errors.js';
import type { ConsoleSink } from './console.js';
import type { BundleMap } from './locate.js';
import { type LoopSignal, loopSignal } from './loop-signal.js';
import { createSandboxPool, retryAfterFor, type SandboxPool, transformBusy } from './pool.js';
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

/** Whether a slot's calls run off the loop now: until when, and when a call was last slow. */
export interface SlowCallWindow {
  readonly options: Pick<TransformSlotOptions, 'onLeaveLoop'>;
  offLoopUntil: number;
  lastSlowCall: number;
}

/** One slot's pool and what its calls share. */
interface SlotState extends SlowCallWindow {
  readonly options: TransformSlotOptions;
  readonly pool: SandboxPool;
  readonly retryAfterS: number;
  /** Set once `warm()` loaded the first isolate: later ones are built off this thread. */
  warmed: boolean;
}

/** Creates a slot; its first isolate is built by `warm()` or the first call. */
export function createTransformSlot(options: TransformSlotOptions): TransformSlot {
  const { exportName, limits, console } = options;
  const retryAfterS = retryAfterFor(limits.timeoutMs);
  const pool = createSandboxPool({
    key: options.key,
    code: options.code,
    ...(options.map ? { map: options.map } : {}),
    // The first isolate loads on this thread (start-up); later ones, built while serving, off it,
    // those of calls through the gate. (The pool builds on acquire, once `state` below exists.)
    build: ({ code, map }, waitMs) => {
      const build = () =>
        createSandbox(code, exportName, limits, console, { offThread: state.warmed, ...(map ? { map } : {}) });
      return state.warmed && waitMs !== undefined ? throughGate(state, build, waitMs) : build();
    },
    maxInFlight: limits.maxInFlight,
    maxWaiting: limits.maxInFlight,
    retryAfterS,
  });
  const state: SlotState = {
    options,
    pool,
    retryAfterS,
    warmed: false,
    offLoopUntil: 0,
    lastSlowCall: Number.NEGATIVE_INFINITY,
  };
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
      return performance.now() < state.offLoopUntil;
    },
    async warm() {
      pool.release(await pool.acquire(0));
      state.warmed = true;
    },
    call: (json, rawBody, timeoutMs) => callSlot(state, json, rawBody, timeoutMs),
    swap: (code, map) => pool.swap(code, map),
    dispose: () => pool.dispose(),
  };
}

/**
 * `TransformSlot.call`: on the loop while the slot is not off it (cut at the slice, then run
 * again off the loop), else off it; a time-out is the whole budget's, however it was split.
 */
async function callSlot(state: SlotState, json: string, rawBody: string, timeoutMs: number): Promise<string> {
  const { pool } = state;
  // Taken before the first await: the transform process tells the gateway when this call leaves the loop.
  const signal = loopSignal();
  const started = performance.now();
  const left = () => Math.max(1, Math.ceil(timeoutMs - (performance.now() - started)));
  try {
    if (performance.now() >= state.offLoopUntil) {
      // Taken without a wait when one is idle: calls on the loop run one after another.
      const sandbox = pool.takeIdle() ?? (await waitOffLoop(signal, () => pool.acquire(left())));
      let answer: string | undefined;
      try {
        answer = runOnLoop(state, sandbox, json, rawBody, left());
      } finally {
        pool.release(sandbox);
      }
      if (answer !== undefined) return answer;
    }
    // Cut at the slice, or the slot's calls are off the loop: the rest of this call never holds it.
    signal?.off();
    const sandbox = await pool.acquire(left());
    try {
      return await runOffLoop(state, sandbox, json, rawBody, left);
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
}

/** Waits off the loop for `wait` (an isolate, maybe built meanwhile); the call is back on the loop after. */
async function waitOffLoop<T>(signal: LoopSignal | undefined, wait: () => Promise<T>): Promise<T> {
  signal?.off();
  const waited = await wait();
  signal?.on();
  return waited;
}

/**
 * Counts a call that spent the slice in CPU time, past its isolate's cold calls: the second
 * within SLOW_CALLS_WINDOW_MS sends the slot's calls off the loop; while off, one renews the stay.
 */
export function noteSlowCall(
  state: SlowCallWindow,
  sandbox: Pick<Sandbox, 'calls' | 'lastCallCpuMs'>,
  thresholdMs: number,
): void {
  if (sandbox.calls <= COLD_CALLS || sandbox.lastCallCpuMs < thresholdMs) return;
  const now = performance.now();
  const off = now < state.offLoopUntil;
  if (off || now - state.lastSlowCall <= SLOW_CALLS_WINDOW_MS) {
    if (!off) state.options.onLeaveLoop?.();
    state.offLoopUntil = now + OFF_LOOP_FOR_MS;
  }
  state.lastSlowCall = now;
}

/** The call on the loop, cut at the slice; undefined when it needs to run again off the loop. */
function runOnLoop(
  state: SlotState,
  sandbox: Sandbox,
  json: string,
  rawBody: string,
  budgetMs: number,
): string | undefined {
  const slice = Math.min(ON_LOOP_SLICE_MS, budgetMs);
  try {
    return sandbox.callSync(json, rawBody, slice, slice < budgetMs ? { cut: true } : undefined);
  } catch (err) {
    if (!timedOut(err) || slice >= budgetMs) throw err;
    // Cut while mostly waiting for a core, or while cold, or once: only this call runs again off the loop.
    noteSlowCall(state, sandbox, slice / 2);
    return undefined;
  }
}

/**
 * Runs `work` off the loop through the gate across mappings, waiting at most `waitMs` for it
 * (TRANSFORM_BUSY when it stays shut): a call, or the build of its isolate, whose top level may
 * run as long as a call.
 */
async function throughGate<T>(
  state: Pick<SlotState, 'options' | 'retryAfterS'>,
  work: () => Promise<T>,
  waitMs: number,
): Promise<T> {
  const { gate } = state.options;
  if (gate && !(await gate.acquire(waitMs))) {
    const limit = 'off the event loop, one per spare core';
    throw transformBusy(state.options.key, gate.slots, limit, state.retryAfterS);
  }
  try {
    return await work();
  } finally {
    gate?.release();
  }
}

/** The call off the loop, through the gate across mappings. */
async function runOffLoop(
  state: SlotState,
  sandbox: Sandbox,
  json: string,
  rawBody: string,
  budgetMs: () => number,
): Promise<string> {
  const call = async () => {
    try {
      return await sandbox.callAsync(json, rawBody, budgetMs());
    } finally {
      noteSlowCall(state, sandbox, ON_LOOP_SLICE_MS);
    }
  };
  return throughGate(state, call, budgetMs());
}
