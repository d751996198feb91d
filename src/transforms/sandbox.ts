import { createRequire } from 'node:module';
import type ivm from 'isolated-vm';
import { type HookdError, hookdError, isHookdError } from '../errors.js';
import { type ConsoleSink, consolePrelude, createConsoleBudget } from './console.js';
import { BUNDLE_FILENAME, type BundleMap } from './locate.js';
import { prelude, WITHOUT_WASM } from './sandbox-prelude.js';

export { MAX_ERROR_CHARS } from './sandbox-prelude.js';

export interface SandboxLimits {
  readonly timeoutMs: number;
  readonly memoryLimitMb: number;
  /** The result's JSON, at most (characters); checked in the isolate, before it is copied out. */
  readonly maxResultBytes: number;
  /** WebAssembly, SharedArrayBuffer and Atomics stay (they are removed by default). */
  readonly allowWasm?: boolean;
}

/** A call on the event loop cut at a slice, to run again off it. */
export interface CutOptions {
  /**
   * A time-out is the cut, not the end: the call's console lines are dropped (its rerun writes
   * them) and the isolate is kept.
   */
  readonly cut: true;
}

/** One warm isolate running one compiled transform, one call at a time. */
export interface Sandbox {
  /**
   * Calls the transform on this thread with its input as JSON without `rawBody`, which travels
   * apart (so it is not encoded twice); without `payload`, the sandbox parses `rawBody` for it.
   * A few microseconds, but the event loop waits for it: the caller bounds `timeoutMs`.
   */
  callSync(json: string, rawBody: string, timeoutMs: number, cut?: CutOptions): string;
  /** The same call on isolated-vm's own thread: the event loop runs meanwhile (about 60 µs more CPU). */
  callAsync(json: string, rawBody: string, timeoutMs: number): Promise<string>;
  /**
   * The time the last call took, in ms: CPU time off the loop (where waiting for a thread would
   * count otherwise), wall time of a failed call on it; 0 after a call on the loop that succeeded.
   */
  readonly lastCallCpuMs: number;
  /** Calls started in this isolate, cut ones included (its first ones run cold: V8 compiles as it goes). */
  readonly calls: number;
  /** True once a memory-limit kill, a time-out (state left half-changed) or `dispose` ended it. */
  readonly disposed: boolean;
  dispose(): void;
}

/**
 * How an isolate is set up: on this thread (start-up and `hookd try`: an isolate's asynchronous
 * calls complete through a wake-up of Node's event loop, and a start-up where nothing else was
 * pending was seen to wait forever on one), or on isolated-vm's threads while serving, so that
 * rebuilding an isolate a call timed out in (about 5 ms of compiling) does not stall answers.
 */
function setupSteps(isolate: ivm.Isolate, offThread: boolean) {
  return offThread
    ? {
        context: () => isolate.createContext(),
        run: async (context: ivm.Context, source: string, filename: string, timeout?: number) => {
          const script = await isolate.compileScript(source, { filename });
          await script.run(context, timeout === undefined ? {} : { timeout });
        },
        set: (context: ivm.Context, key: string, value: ivm.Transferable) => context.global.set(key, value),
        get: (context: ivm.Context, key: string) => context.global.get(key),
        ref: (context: ivm.Context, key: string) => context.global.get(key, { reference: true }),
      }
    : {
        context: async () => isolate.createContextSync(),
        run: async (context: ivm.Context, source: string, filename: string, timeout?: number) => {
          isolate.compileScriptSync(source, { filename }).runSync(context, timeout === undefined ? {} : { timeout });
        },
        set: async (context: ivm.Context, key: string, value: ivm.Transferable) => {
          context.global.setSync(key, value);
        },
        get: async (context: ivm.Context, key: string) => context.global.getSync(key),
        ref: async (context: ivm.Context, key: string) => context.global.getSync(key, { reference: true }),
      };
}

/** What the isolate answered, or the TRANSFORM_FAILED its failure envelope stands for, located with `map`. */
function answered(answer: string, map: BundleMap | undefined): string {
  if (!answer.startsWith('{"ok":false')) return answer;
  const envelope = JSON.parse(answer) as { error?: string; stack?: string };
  const site = map?.locate(envelope.stack) ?? {};
  throw hookdError('TRANSFORM_FAILED', { reason: envelope.error || 'the transform threw', ...site });
}

/** isolated-vm, loaded with the first sandbox: a config without transforms never loads it. */
let isolatedVm: typeof ivm | undefined;
const loadIsolatedVm = () => (isolatedVm ??= createRequire(import.meta.url)('isolated-vm') as typeof ivm);

/** One sandbox's isolate, its references into it, and what its calls keep. */
interface SandboxState {
  readonly isolate: ivm.Isolate;
  readonly callRef: ivm.Reference<(json: string, rawBody: string) => string>;
  readonly settledRef: ivm.Reference<() => string>;
  readonly console: ReturnType<typeof createConsoleBudget>;
  readonly map: BundleMap | undefined;
  readonly memoryLimitMb: number;
  /**
   * Kept in JavaScript: asking the isolate (isDisposed) on every call cost about 1 µs. It is
   * disposed only by `disposeSandbox` and by a memory-limit kill, which a call's error reports.
   */
  disposed: boolean;
  lastCallCpuMs: number;
  calls: number;
}

/**
 * Builds an isolate, runs the bundle, and keeps a reference to `__hookdCall`. A failure the
 * transform throws is a TRANSFORM_FAILED placed in the author's source by `map`.
 */
export async function createSandbox(
  code: string,
  exportName: string | undefined,
  limits: SandboxLimits,
  sink: ConsoleSink,
  options: { offThread?: boolean; map?: BundleMap } = {},
): Promise<Sandbox> {
  const { map } = options;
  const console = createConsoleBudget(sink);
  const ivm = loadIsolatedVm();
  const isolate = new ivm.Isolate({ memoryLimit: limits.memoryLimitMb });
  try {
    const step = setupSteps(isolate, options.offThread === true);
    const context = await step.context();
    // Synchronous, so that a line is counted against the call that wrote it (an ignored callback
    // runs later, and queued every copy: 300 lines of 30 MB took the host past 6 GB).
    await step.set(context, '__hookdLog', new ivm.Callback(console.write, { sync: true }));
    // The console first, so that the transform's code never sees the log function.
    await step.run(context, consolePrelude(sink.enabled), 'console.js');
    if (!limits.allowWasm) await step.run(context, WITHOUT_WASM, 'limits.js');
    const bundle = `${code}\n${prelude(exportName, limits.maxResultBytes)}`;
    await step.run(context, bundle, BUNDLE_FILENAME, limits.timeoutMs);
    if ((await step.get(context, '__hookdReady')) !== true) {
      throw hookdError('TRANSFORM_EXPORT_MISSING', exportName ? { exportName } : {});
    }
    const callRef = (await step.ref(context, '__hookdCall')) as SandboxState['callRef'];
    const settledRef = (await step.ref(context, '__hookdSettled')) as SandboxState['settledRef'];
    const { memoryLimitMb } = limits;
    const state: SandboxState = {
      isolate,
      callRef,
      settledRef,
      console,
      map,
      memoryLimitMb,
      disposed: false,
      lastCallCpuMs: 0,
      calls: 0,
    };
    return sandboxOf(state);
  } catch (err) {
    if (!isolate.isDisposed) isolate.dispose();
    if (isHookdError(err)) throw err;
    // A module that throws at load is placed in its source like a call's failure.
    const site = map?.locate((err as Error).stack) ?? {};
    throw hookdError('TRANSFORM_LOAD_FAILED', { reason: (err as Error).message, ...site });
  }
}

/** The sandbox over a loaded isolate: its methods, made once, call the functions below. */
function sandboxOf(state: SandboxState): Sandbox {
  return {
    callSync: (json, rawBody, timeout, cut) => callOnLoop(state, json, rawBody, timeout, cut),
    callAsync: (json, rawBody, timeout) => callOffLoop(state, json, rawBody, timeout),
    get lastCallCpuMs() {
      return state.lastCallCpuMs;
    },
    get calls() {
      return state.calls;
    },
    get disposed() {
      return state.disposed;
    },
    dispose: () => disposeSandbox(state),
  };
}

/** Ends the sandbox: its isolate is disposed, and it says so without asking the isolate. */
function disposeSandbox(state: SandboxState): void {
  state.disposed = true;
  if (!state.isolate.isDisposed) state.isolate.dispose();
}

/** isolated-vm gives its errors no code: a time-out and a memory-limit kill are told by their text. */
function callFailure(state: SandboxState, err: unknown, timeout: number, cut = false): HookdError<'TRANSFORM_FAILED'> {
  const message = (err as Error).message ?? String(err);
  if (/timed out/i.test(message)) {
    // Out of time, the call may have left the isolate's state half-changed: it is not used
    // again. Cut at the event-loop slice, it is kept (and warm) for the call's rerun.
    if (!cut) disposeSandbox(state);
    return hookdError('TRANSFORM_FAILED', { reason: `timed out after ${timeout} ms`, timedOutAfterMs: timeout });
  }
  if (/memory limit/i.test(message) || state.isolate.isDisposed) {
    disposeSandbox(state);
    return hookdError('TRANSFORM_FAILED', { reason: `exceeded its memory limit of ${state.memoryLimitMb} MB` });
  }
  return hookdError('TRANSFORM_FAILED', { reason: message });
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
 * applySync on a warm reference costs a few microseconds; isolated-vm enforces the timeout itself.
 */
function callOnLoop(state: SandboxState, json: string, rawBody: string, timeout: number, cut?: CutOptions): string {
  state.calls++;
  state.console.begin();
  // Wall time here: asking the isolate for its CPU time cost about 5 µs per call under load,
  // and on this thread the two differ only when the machine is busy.
  const started = performance.now();
  state.lastCallCpuMs = 0;
  let error: HookdError<'TRANSFORM_FAILED'> | undefined;
  let answer: string;
  try {
    answer = state.callRef.applySync(undefined, [json, rawBody], { timeout }) as string;
    if (answer === '') answer = state.settledRef.applySync(undefined, [], { timeout }) as string;
  } catch (err) {
    state.lastCallCpuMs = performance.now() - started;
    error = callFailure(state, err, timeout, cut?.cut === true);
    throw error;
  } finally {
    state.console.end(cut?.cut === true && error?.params.timedOutAfterMs !== undefined);
  }
  return answered(answer, state.map);
}

/** `Sandbox.callAsync`: the call on isolated-vm's thread, its CPU time noted. */
async function callOffLoop(state: SandboxState, json: string, rawBody: string, timeout: number): Promise<string> {
  state.calls++;
  state.console.begin();
  const cpuStart = cpuNs(state.isolate);
  let answer: string;
  try {
    const started = performance.now();
    answer = (await state.callRef.apply(undefined, [json, rawBody], { timeout })) as string;
    if (answer === '') {
      // The promise settled inside the first call (the sandbox has only microtasks).
      const left = Math.max(1, Math.ceil(timeout - (performance.now() - started)));
      answer = (await state.settledRef.apply(undefined, [], { timeout: left })) as string;
    }
  } catch (err) {
    noteCpuSince(state, cpuStart);
    throw callFailure(state, err, timeout);
  } finally {
    if (!state.disposed) noteCpuSince(state, cpuStart);
    state.console.end();
  }
  return answered(answer, state.map);
}
