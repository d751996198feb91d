import type { ConsoleSink } from './console.js';
import { createSandbox, type Sandbox, type SandboxLimits } from './sandbox.js';

/** One mapping's transform: its current code and the warm sandbox running it. */
export interface TransformSlot {
  /** The mapping id it runs under. */
  readonly key: string;
  /** The module's real path when it was loaded. */
  readonly file: string;
  /** `transform.module` as configured (resolved again, with its containment, on every reload). */
  readonly module: string;
  readonly code: string;
  /** The warm sandbox; built again when the last one was disposed (a memory-limit kill). */
  sandbox(): Promise<Sandbox>;
  /**
   * Swaps in newer code once its sandbox has loaded (throws, keeping the old code, when it
   * does not load); calls already running on the old isolate get `graceMs` to finish.
   */
  swap(code: string, graceMs: number): Promise<void>;
  /** Drops a sandbox a call found dead, so that the next call builds a new one. */
  forgetDisposed(): void;
  dispose(): void;
}

export interface TransformSlotOptions {
  readonly key: string;
  readonly file: string;
  readonly module: string;
  readonly exportName: string | undefined;
  readonly code: string;
  readonly limits: SandboxLimits;
  readonly console: ConsoleSink;
}

/** Creates a slot; its sandbox is built on the first `sandbox()`. */
export function createTransformSlot(options: TransformSlotOptions): TransformSlot {
  const { exportName, limits, console } = options;
  let code = options.code;
  let current: Sandbox | undefined;
  let building: Promise<Sandbox> | undefined;

  function build(): Promise<Sandbox> {
    const builtFrom = code;
    building ??= createSandbox(builtFrom, exportName, limits, console)
      .then((sandbox) => {
        // A swap put in newer code meanwhile: keep that one, drop this rebuild.
        if (code !== builtFrom && current && !current.disposed) {
          sandbox.dispose();
          return current;
        }
        current = sandbox;
        return sandbox;
      })
      .finally(() => {
        building = undefined;
      });
    return building;
  }

  return {
    key: options.key,
    file: options.file,
    module: options.module,
    get code() {
      return code;
    },
    sandbox() {
      return current && !current.disposed ? Promise.resolve(current) : build();
    },
    async swap(next, graceMs) {
      const sandbox = await createSandbox(next, exportName, limits, console);
      const old = current;
      code = next;
      current = sandbox;
      if (old) setTimeout(() => old.dispose(), graceMs).unref();
    },
    forgetDisposed() {
      if (current?.disposed) current = undefined;
    },
    dispose() {
      current?.dispose();
    },
  };
}
