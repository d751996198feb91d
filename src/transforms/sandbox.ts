import { createRequire } from 'node:module';
import type ivm from 'isolated-vm';
import { type HookdError, hookdError, isHookdError } from '../errors.js';
import { BUNDLE_GLOBAL } from './compile.js';
import { type ConsoleSink, consolePrelude, createConsoleBudget } from './console.js';
import { BUNDLE_FILENAME, type BundleMap } from './locate.js';

export interface SandboxLimits {
  readonly timeoutMs: number;
  readonly memoryLimitMb: number;
  /** The result's JSON, at most (characters); checked in the isolate, before it is copied out. */
  readonly maxResultBytes: number;
  /** WebAssembly, SharedArrayBuffer and Atomics stay (they are removed by default). */
  readonly allowWasm?: boolean;
}

/**
 * Removes what escapes the isolate's memory limit: WebAssembly memory is allocated outside
 * V8's heap (a filled `new WebAssembly.Memory({ initial: 16000 })` took 1-2 GB per call),
 * and SharedArrayBuffer with Atomics can block a thread.
 */
const WITHOUT_WASM = 'delete globalThis.WebAssembly; delete globalThis.SharedArrayBuffer; delete globalThis.Atomics;';

/** An error's text crossing out of the sandbox, at most (docs/operations.md#limits). */
export const MAX_ERROR_CHARS = 1024;
/** An error's stack crossing out of the sandbox, at most: enough for the frames that are located. */
const MAX_STACK_CHARS = 4096;

/**
 * The code that runs inside the isolate after the bundle: picks the export, and defines
 * `__hookdCall(json)` which parses the context, awaits the transform and answers a JSON
 * envelope — so only strings ever cross the boundary.
 */
function prelude(exportName: string | undefined, maxResultBytes: number): string {
  const pick = exportName
    ? `m[${JSON.stringify(exportName)}]`
    : `(typeof m.default === 'function' ? m.default : m.transform)`;
  return `
(() => {
  const m = globalThis.${BUNDLE_GLOBAL} ?? {};
  const fn = ${pick};
  globalThis.__hookdReady = typeof fn === 'function';
  // Bounded in here, so that a huge message or result is never copied to the host.
  const text = (err) => {
    try {
      const message = err && typeof err.message === 'string' ? err.message : String(err);
      return message.length > ${MAX_ERROR_CHARS} ? message.slice(0, ${MAX_ERROR_CHARS}) + '…' : message;
    } catch {
      return 'the transform threw something that cannot be shown';
    }
  };
  // The stack is the bundle's (V8 frames of ${BUNDLE_FILENAME}); the host maps it to the author's source.
  const stackOf = (err) => {
    try {
      const stack = err && typeof err.stack === 'string' ? err.stack : '';
      return stack.length > ${MAX_STACK_CHARS} ? stack.slice(0, ${MAX_STACK_CHARS}) : stack;
    } catch {
      return '';
    }
  };
  const fail = (err) => JSON.stringify({ ok: false, error: text(err) || 'the transform threw', stack: stackOf(err) });
  const done = (value) => {
    if (value === undefined) return '{"ok":true}';
    let json;
    try { json = JSON.stringify({ ok: true, value }); } catch (err) { return fail('its result is not JSON: ' + text(err)); }
    if (json.length > ${maxResultBytes}) return fail('its result is over ${maxResultBytes} characters of JSON');
    return json;
  };
  let settled;
  // Sync transforms answer at once. An async one can only wait on microtasks (the sandbox
  // has no timers or I/O), so it has settled by the time the call returns: __hookdSettled reads it.
  globalThis.__hookdCall = (json, rawBody) => {
    try {
      const input = JSON.parse(json);
      input.rawBody = rawBody;
      if (!('payload' in input)) input.payload = JSON.parse(rawBody.charCodeAt(0) === 0xfeff ? rawBody.slice(1) : rawBody);
      const value = fn(input);
      if (!value || typeof value.then !== 'function') return done(value);
      settled = '{"ok":false,"error":"the transform returned a promise that never settled"}';
      value.then((v) => { try { settled = done(v); } catch (err) { settled = fail(err); } }, (err) => { settled = fail(err); });
      return '';
    } catch (err) {
      return fail(err);
    }
  };
  globalThis.__hookdSettled = () => settled;
})();`;
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
    const callRef = (await step.ref(context, '__hookdCall')) as ivm.Reference<
      (json: string, rawBody: string) => string
    >;
    const settledRef = (await step.ref(context, '__hookdSettled')) as ivm.Reference<() => string>;
    // Kept in JavaScript: asking the isolate (isDisposed) on every call cost about 1 µs. It is
    // disposed only here and by a memory-limit kill, which a call's error reports.
    let disposed = false;
    const dispose = () => {
      disposed = true;
      if (!isolate.isDisposed) isolate.dispose();
    };
    /** isolated-vm gives its errors no code: a time-out and a memory-limit kill are told by their text. */
    const failed = (err: unknown, timeout: number, cut = false): HookdError<'TRANSFORM_FAILED'> => {
      const message = (err as Error).message ?? String(err);
      if (/timed out/i.test(message)) {
        // Out of time, the call may have left the isolate's state half-changed: it is not used
        // again. Cut at the event-loop slice, it is kept (and warm) for the call's rerun.
        if (!cut) dispose();
        return hookdError('TRANSFORM_FAILED', { reason: `timed out after ${timeout} ms`, timedOutAfterMs: timeout });
      }
      if (/memory limit/i.test(message) || isolate.isDisposed) {
        dispose();
        return hookdError('TRANSFORM_FAILED', { reason: `exceeded its memory limit of ${limits.memoryLimitMb} MB` });
      }
      return hookdError('TRANSFORM_FAILED', { reason: message });
    };
    const args = (json: string, rawBody: string): [string, string] => [json, rawBody];
    let lastCallCpuMs = 0;
    let calls = 0;
    /** The isolate's CPU time so far (ns); about 0.2 µs to read. A killed isolate has none. */
    const cpuNs = (): bigint => {
      try {
        return isolate.cpuTime;
      } catch {
        return 0n;
      }
    };
    const since = (startNs: bigint) => {
      const now = cpuNs();
      lastCallCpuMs = now > startNs ? Number(now - startNs) / 1e6 : 0;
    };
    return {
      // applySync on a warm reference costs a few microseconds; isolated-vm enforces the timeout itself.
      callSync(json, rawBody, timeout, cut) {
        calls++;
        console.begin();
        // Wall time here: asking the isolate for its CPU time cost about 5 µs per call under load,
        // and on this thread the two differ only when the machine is busy.
        const started = performance.now();
        lastCallCpuMs = 0;
        let error: HookdError<'TRANSFORM_FAILED'> | undefined;
        let answer: string;
        try {
          answer = callRef.applySync(undefined, args(json, rawBody), { timeout }) as string;
          if (answer === '') answer = settledRef.applySync(undefined, [], { timeout }) as string;
        } catch (err) {
          lastCallCpuMs = performance.now() - started;
          error = failed(err, timeout, cut?.cut === true);
          throw error;
        } finally {
          console.end(cut?.cut === true && error?.params.timedOutAfterMs !== undefined);
        }
        return answered(answer, map);
      },
      async callAsync(json, rawBody, timeout) {
        calls++;
        console.begin();
        const cpuStart = cpuNs();
        let answer: string;
        try {
          const started = performance.now();
          answer = (await callRef.apply(undefined, args(json, rawBody), { timeout })) as string;
          if (answer === '') {
            // The promise settled inside the first call (the sandbox has only microtasks).
            const left = Math.max(1, Math.ceil(timeout - (performance.now() - started)));
            answer = (await settledRef.apply(undefined, [], { timeout: left })) as string;
          }
        } catch (err) {
          since(cpuStart);
          throw failed(err, timeout);
        } finally {
          if (!disposed) since(cpuStart);
          console.end();
        }
        return answered(answer, map);
      },
      get lastCallCpuMs() {
        return lastCallCpuMs;
      },
      get calls() {
        return calls;
      },
      get disposed() {
        return disposed;
      },
      dispose,
    };
  } catch (err) {
    if (!isolate.isDisposed) isolate.dispose();
    if (isHookdError(err)) throw err;
    // A module that throws at load is placed in its source like a call's failure.
    const site = map?.locate((err as Error).stack) ?? {};
    throw hookdError('TRANSFORM_LOAD_FAILED', { reason: (err as Error).message, ...site });
  }
}
