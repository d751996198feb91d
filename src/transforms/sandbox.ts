import ivm from 'isolated-vm';
import { BUNDLE_GLOBAL } from './compile.js';

export interface SandboxLimits {
  readonly timeoutMs: number;
  readonly memoryLimitMb: number;
}

export type ConsoleLevel = 'debug' | 'info' | 'warn' | 'error';

/** Why a sandbox call failed, in words safe to send back (the transform's own message, no host paths). */
export class SandboxError extends Error {
  constructor(
    message: string,
    readonly fatal = false,
  ) {
    super(message);
    this.name = 'SandboxError';
  }
}

/**
 * The code that runs inside the isolate after the bundle: picks the export, and defines
 * `__hookdCall(json)` which parses the context, awaits the transform and answers a JSON
 * envelope — so only strings ever cross the boundary.
 */
function prelude(exportName: string | undefined): string {
  const pick = exportName
    ? `m[${JSON.stringify(exportName)}]`
    : `(typeof m.default === 'function' ? m.default : m.transform)`;
  return `
(() => {
  const log = globalThis.__hookdLog;
  delete globalThis.__hookdLog;
  const fmt = (v) => { if (typeof v === 'string') return v; try { return JSON.stringify(v); } catch { return String(v); } };
  const write = (level) => (...args) => log(level, args.map(fmt).join(' '));
  globalThis.console = { log: write('info'), info: write('info'), debug: write('debug'), warn: write('warn'), error: write('error') };
  const m = globalThis.${BUNDLE_GLOBAL} ?? {};
  const fn = ${pick};
  globalThis.__hookdReady = typeof fn === 'function';
  globalThis.__hookdCall = async (json) => {
    try {
      const value = await fn(JSON.parse(json));
      return value === undefined ? '{"ok":true}' : JSON.stringify({ ok: true, value });
    } catch (err) {
      const message = err && typeof err.message === 'string' ? err.message : String(err);
      return JSON.stringify({ ok: false, error: message || 'the transform threw' });
    }
  };
})();`;
}

/** One warm isolate running one compiled transform. */
export interface Sandbox {
  /** Calls the transform with a JSON context; resolves to the JSON envelope. */
  call(json: string): Promise<string>;
  readonly disposed: boolean;
  dispose(): void;
}

/** Builds an isolate, runs the bundle, and keeps a reference to `__hookdCall`. */
export async function createSandbox(
  code: string,
  exportName: string | undefined,
  limits: SandboxLimits,
  onConsole: (level: ConsoleLevel, text: string) => void,
): Promise<Sandbox> {
  const isolate = new ivm.Isolate({ memoryLimit: limits.memoryLimitMb });
  try {
    const context = await isolate.createContext();
    await context.global.set('__hookdLog', new ivm.Callback(onConsole, { ignored: true }));
    const script = await isolate.compileScript(`${code}\n${prelude(exportName)}`, { filename: 'transform.js' });
    await script.run(context, { timeout: limits.timeoutMs });
    if ((await context.global.get('__hookdReady')) !== true) {
      throw new SandboxError(
        exportName
          ? `the module exports no function named ${exportName}`
          : 'the module exports no default or transform function',
        true,
      );
    }
    const ref = (await context.global.get('__hookdCall', { reference: true })) as ivm.Reference<
      (json: string) => Promise<string>
    >;
    return {
      async call(json) {
        let timedOut = false;
        const watchdog = setTimeout(() => {
          timedOut = true;
          if (!isolate.isDisposed) isolate.dispose();
        }, limits.timeoutMs);
        try {
          return (await ref.apply(undefined, [json], { result: { promise: true } })) as string;
        } catch (err) {
          if (timedOut) throw new SandboxError(`timed out after ${limits.timeoutMs} ms`);
          const message = (err as Error).message ?? String(err);
          if (/memory limit/i.test(message))
            throw new SandboxError(`exceeded its memory limit of ${limits.memoryLimitMb} MB`);
          if (isolate.isDisposed) throw new SandboxError('its sandbox was reset while it ran');
          throw new SandboxError(message);
        } finally {
          clearTimeout(watchdog);
        }
      },
      get disposed() {
        return isolate.isDisposed;
      },
      dispose() {
        if (!isolate.isDisposed) isolate.dispose();
      },
    };
  } catch (err) {
    if (!isolate.isDisposed) isolate.dispose();
    if (err instanceof SandboxError) throw err;
    throw new SandboxError(`failed while loading: ${(err as Error).message}`, true);
  }
}
