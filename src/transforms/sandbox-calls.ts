import type ivm from 'isolated-vm';
import { capped } from '../error-words.js';
import { type HookdError, hookdError } from '../errors.js';
import { MAX_ANSWER_DEPTH, nestedDeeperThan } from '../json-depth.js';
import type { createConsoleBudget } from './console.js';
import type { BundleMap } from './locate.js';
import { MAX_STACK_CHARS } from './sandbox-prelude.js';

/**
 * How long past its time limit a call off the event loop may run before the host disposes its
 * isolate, whatever keeps it going: isolated-vm did not stop an isolate that kept calling back
 * into the host (a loop of console calls ran 27 s against a 1000 ms limit).
 */
export const WATCHDOG_GRACE_MS = 250;

/** One sandbox's isolate, its references into it, and what its calls keep. */
export interface SandboxState {
  readonly isolate: ivm.Isolate;
  readonly callRef: ivm.Reference<(json: string, rawBody: string) => string>;
  readonly settledRef: ivm.Reference<() => string>;
  readonly console: ReturnType<typeof createConsoleBudget>;
  readonly map: BundleMap | undefined;
  readonly memoryLimitMb: number;
  /** The result's JSON, at most: checked in the isolate, and again on what crosses. */
  readonly maxResultBytes: number;
  /**
   * Kept in JavaScript: asking the isolate (isDisposed) on every call cost about 1 µs. It is
   * disposed only by `disposeSandbox` and by a memory-limit kill, which a call's error reports.
   */
  disposed: boolean;
  /** Set when the watchdog disposed the isolate: the call's failure is a time-out. */
  stoppedByWatchdog: boolean;
  lastCallCpuMs: number;
  calls: number;
}

/** A call on the event loop cut at a slice, to run again off it. */
export interface CutOptions {
  /**
   * A time-out is the cut, not the end: the call's console lines are dropped (its rerun writes
   * them) and the isolate is kept.
   */
  readonly cut: true;
}

const failed = (reason: string) => hookdError('TRANSFORM_FAILED', { reason });

/**
 * What the isolate answered, or the TRANSFORM_FAILED its failure envelope stands for, located
 * with the sandbox's map. What crossed is checked again here (its type, its size, its JSON).
 */
function answered(answer: unknown, state: SandboxState): string {
  if (typeof answer !== 'string') throw failed('its answer is not a string');
  if (!answer.startsWith('{"ok":false')) {
    if (answer.length > state.maxResultBytes)
      throw failed(`its result is over ${state.maxResultBytes} characters of JSON`);
    // As deep as a payload may be (the envelope is one level more): deeper, it would cost every
    // recursive reader after this one its stack (in the transform process, its end).
    if (nestedDeeperThan(answer, MAX_ANSWER_DEPTH + 1))
      throw failed(`its result nests deeper than ${MAX_ANSWER_DEPTH} levels`);
    return answer;
  }
  let envelope: { error?: unknown; stack?: unknown } | null;
  try {
    envelope = JSON.parse(answer) as typeof envelope;
  } catch {
    throw failed('its answer is not JSON');
  }
  const error = envelope?.error;
  const stack = typeof envelope?.stack === 'string' ? envelope.stack.slice(0, MAX_STACK_CHARS) : undefined;
  // The isolate's allocator refused a buffer while what it holds is near its limit: it would
  // refuse every later call's too. It goes, as one killed at its limit does. (The words alone are
  // no proof: a transform can throw them, and its isolate was rebuilt on every call.)
  if (typeof error === 'string' && error.startsWith('Array buffer allocation failed') && nearItsLimit(state)) {
    disposeSandbox(state);
    throw failed(`exceeded its memory limit of ${state.memoryLimitMb} MB`);
  }
  const site = state.map?.locate(stack) ?? {};
  const reason = typeof error === 'string' && error !== '' ? capped(error) : 'the transform threw';
  throw hookdError('TRANSFORM_FAILED', { reason, ...site });
}

/**
 * Whether the isolate holds half its memory limit or more, heap and buffers, as isolated-vm counts
 * them (its allocator refuses a buffer past the limit). Asked only of a call that failed with the
 * allocator's words; a disposed isolate is past its limit.
 */
function nearItsLimit(state: SandboxState): boolean {
  try {
    const held = state.isolate.getHeapStatisticsSync();
    return held.used_heap_size + held.externally_allocated_size >= (state.memoryLimitMb << 20) / 2;
  } catch {
    return true;
  }
}

/** Ends the sandbox: its isolate is disposed, and it says so without asking the isolate. */
export function disposeSandbox(state: SandboxState): void {
  state.disposed = true;
  if (!state.isolate.isDisposed) state.isolate.dispose();
}

/** isolated-vm gives its errors no code: a time-out and a memory-limit kill are told by their text. */
function callFailure(state: SandboxState, err: unknown, timeout: number, cut = false): HookdError<'TRANSFORM_FAILED'> {
  const message = (err as Error).message ?? String(err);
  if (state.stoppedByWatchdog || /timed out/i.test(message)) {
    // Out of time, the call may have left the isolate's state half-changed: it is not used
    // again. Cut at the event-loop slice, it is kept (and warm) for the call's rerun.
    if (!cut) disposeSandbox(state);
    return hookdError('TRANSFORM_FAILED', { reason: `timed out after ${timeout} ms`, timedOutAfterMs: timeout });
  }
  if (/memory limit/i.test(message) || state.isolate.isDisposed) {
    disposeSandbox(state);
    return hookdError('TRANSFORM_FAILED', { reason: `exceeded its memory limit of ${state.memoryLimitMb} MB` });
  }
  return hookdError('TRANSFORM_FAILED', { reason: capped(message) });
}

/** The isolate's CPU time so far (ns); about 0.2 µs to read. A killed isolate has none. */
function cpuNs(isolate: ivm.Isolate): bigint {
  try {
    return isolate.cpuTime;
  } catch {
    return 0n;
  }
}

/** Notes the CPU time the isolate spent since `startNs` as the last call's. */
function noteCpuSince(state: SandboxState, startNs: bigint): void {
  const now = cpuNs(state.isolate);
  state.lastCallCpuMs = now > startNs ? Number(now - startNs) / 1e6 : 0;
}

/**
 * `Sandbox.callSync`: the call on this thread, its console lines dropped when `cut` cuts it.
 * applySync on a warm reference costs a few microseconds; isolated-vm enforces the timeout itself
 * (no watchdog can run while this thread is in the call; the isolate's console stops calling
 * back into the host once its budget is spent, so nothing keeps the call past its limit).
 */
export function callOnLoop(
  state: SandboxState,
  json: string,
  rawBody: string,
  timeout: number,
  cut?: CutOptions,
): string {
  state.calls++;
  state.console.begin();
  // Wall time here: asking the isolate for its CPU time cost about 5 µs per call under load,
  // and on this thread the two differ only when the machine is busy.
  const started = performance.now();
  state.lastCallCpuMs = 0;
  let error: HookdError<'TRANSFORM_FAILED'> | undefined;
  let answer: unknown;
  try {
    answer = state.callRef.applySync(undefined, [json, rawBody], { timeout });
    if (answer === '') answer = state.settledRef.applySync(undefined, [], { timeout });
  } catch (err) {
    state.lastCallCpuMs = performance.now() - started;
    error = callFailure(state, err, timeout, cut?.cut === true);
    throw error;
  } finally {
    state.console.end(cut?.cut === true && error?.params.timedOutAfterMs !== undefined);
  }
  return answered(answer, state);
}

/**
 * The watchdog of a call off the loop: at `timeout` plus WATCHDOG_GRACE_MS it disposes the
 * isolate (the pool then drops it and builds another) and `stopped` rejects, so that the call
 * ends then even if isolated-vm's promise never settles.
 */
function watch(state: SandboxState, timeout: number): { stopped: Promise<never>; clear(): void } {
  let stop: (err: Error) => void = () => {};
  const stopped = new Promise<never>((_, reject) => {
    stop = reject;
  });
  stopped.catch(() => {});
  const timer = setTimeout(() => {
    state.stoppedByWatchdog = true;
    disposeSandbox(state);
    stop(hookdError('TRANSFORM_FAILED', { reason: `timed out: stopped ${WATCHDOG_GRACE_MS} ms past the time limit` }));
  }, timeout + WATCHDOG_GRACE_MS);
  return { stopped, clear: () => clearTimeout(timer) };
}

/** `promise`, or the watchdog's rejection if that comes first (the promise's own is then ignored). */
function within<T>(promise: Promise<T>, stopped: Promise<never>): Promise<T> {
  promise.catch(() => {});
  return Promise.race([promise, stopped]);
}

/** `Sandbox.callAsync`: the call on isolated-vm's thread, its CPU time noted, watched past its limit. */
export async function callOffLoop(
  state: SandboxState,
  json: string,
  rawBody: string,
  timeout: number,
): Promise<string> {
  state.calls++;
  state.console.begin();
  const cpuStart = cpuNs(state.isolate);
  const watchdog = watch(state, timeout);
  let answer: unknown;
  try {
    const started = performance.now();
    answer = await within(state.callRef.apply(undefined, [json, rawBody], { timeout }), watchdog.stopped);
    if (answer === '') {
      // The promise settled inside the first call (the sandbox has only microtasks).
      const left = Math.max(1, Math.ceil(timeout - (performance.now() - started)));
      answer = await within(state.settledRef.apply(undefined, [], { timeout: left }), watchdog.stopped);
    }
  } catch (err) {
    noteCpuSince(state, cpuStart);
    throw callFailure(state, err, timeout);
  } finally {
    watchdog.clear();
    if (!state.disposed) noteCpuSince(state, cpuStart);
    state.console.end();
  }
  return answered(answer, state);
}
