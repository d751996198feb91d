import { createRequire } from 'node:module';
import type ivm from 'isolated-vm';
import { hookdError, isHookdError } from '../errors.js';
import { type ConsoleSink, consolePrelude, createConsoleBudget } from './console.js';
import { BUNDLE_FILENAME, type BundleMap } from './locate.js';
import { type CutOptions, callOffLoop, callOnLoop, disposeSandbox, type SandboxState } from './sandbox-calls.js';
import { CALL_GLOBALS, callPrelude, FIXED_ARRAY_BUFFERS, pickExport, WITHOUT_WASM } from './sandbox-prelude.js';

export type { CutOptions } from './sandbox-calls.js';
export { MAX_ERROR_CHARS } from './sandbox-prelude.js';

export interface SandboxLimits {
  readonly timeoutMs: number;
  readonly memoryLimitMb: number;
  /** The result's JSON, at most (characters); checked in the isolate, before it is copied out. */
  readonly maxResultBytes: number;
  /** WebAssembly, SharedArrayBuffer and Atomics stay (they are removed by default). */
  readonly allowWasm?: boolean;
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

/** isolated-vm, loaded with the first sandbox: a config without transforms never loads it. */
let isolatedVm: typeof ivm | undefined;
const loadIsolatedVm = () => (isolatedVm ??= createRequire(import.meta.url)('isolated-vm') as typeof ivm);

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
    // The console first, so that the transform's code never sees the log function; then what
    // hookd calls, its references taken before the bundle runs and the globals removed.
    await step.run(context, consolePrelude(sink.enabled), 'console.js');
    await step.run(
      context,
      limits.allowWasm ? FIXED_ARRAY_BUFFERS : `${WITHOUT_WASM} ${FIXED_ARRAY_BUFFERS}`,
      'limits.js',
    );
    await step.run(context, callPrelude(limits.maxResultBytes), 'sandbox.js');
    const callRef = (await step.ref(context, '__hookdCall')) as SandboxState['callRef'];
    const settledRef = (await step.ref(context, '__hookdSettled')) as SandboxState['settledRef'];
    await step.run(context, CALL_GLOBALS.map((name) => `delete globalThis.${name};`).join(' '), 'sandbox.js');
    await step.run(context, `${code}\n${pickExport(exportName)}`, BUNDLE_FILENAME, limits.timeoutMs);
    if ((await step.get(context, '__hookdReady')) !== true) {
      throw hookdError('TRANSFORM_EXPORT_MISSING', exportName ? { exportName } : {});
    }
    const { memoryLimitMb, maxResultBytes } = limits;
    const state: SandboxState = {
      isolate,
      callRef,
      settledRef,
      console,
      map,
      memoryLimitMb,
      maxResultBytes,
      disposed: false,
      stoppedByWatchdog: false,
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

/** The sandbox over a loaded isolate: its methods, made once, call those of ./sandbox-calls.ts. */
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
