import pino from 'pino';
import { type ErrorCode, type ErrorParams, type HookdError, hookdError, isHookdError } from '../errors.js';
import type { Logger } from '../log.js';
import type { TransformContext } from '../mapping/index.js';
import type { Bundle } from './compile.js';
import type { TransformHostOptions } from './host.js';

/** How the gateway and its transform process (src/transforms/child.ts) talk, and what crosses. */

/** An error crossing from the transform process: a coded one by its code, values and headers (a 503's `Retry-After`). */
export type WireError =
  | { readonly code: ErrorCode; readonly params: unknown; readonly headers?: Readonly<Record<string, string>> }
  | { readonly message: string };

/** What the gateway tells its transform process (src/transforms/child.ts). */
export type FromGateway =
  | { readonly t: 'start'; readonly options: Omit<TransformHostOptions, 'log'>; readonly level: pino.LevelWithSilent }
  | {
      readonly t: 'call';
      readonly id: number;
      readonly key: string;
      readonly context: TransformContext;
      readonly budgetMs?: number | undefined;
    }
  | { readonly t: 'reload'; readonly id: number }
  | { readonly t: 'close' };

/** What the transform process answers. */
export type ToGateway =
  | { readonly t: 'ready'; readonly size: number }
  | { readonly t: 'failed'; readonly error: WireError }
  | { readonly t: 'done'; readonly id: number; readonly value?: unknown; readonly error?: WireError }
  | { readonly t: 'reloaded'; readonly id: number }
  | { readonly t: 'log'; readonly line: string }
  /** A mapping's bundle, loaded or swapped in: a restarted process gets it back (`known`). */
  | { readonly t: 'bundle'; readonly key: string; readonly bundle: Bundle }
  /** A mapping's new code (its hash) is being loaded; without a hash, it no longer is (set-aside.ts). */
  | { readonly t: 'loading'; readonly key: string; readonly hash?: string }
  /** Call `id` left the process's event loop (it waits, or runs on isolated-vm's thread): it cannot be what holds its thread. */
  | { readonly t: 'off'; readonly id: number }
  /** Call `id` runs on the process's event loop again. */
  | { readonly t: 'on'; readonly id: number };

/** The start message: what the process compiles (`known`: a restarted one's last good bundles), and at which level it logs. */
export function startMessage(options: TransformHostOptions, known: ReadonlyMap<string, Bundle>): FromGateway {
  const { config } = options;
  return {
    t: 'start',
    options: {
      config: { hooks: { transformsDir: config.hooks.transformsDir, transforms: config.hooks.transforms } },
      mappings: options.mappings.map(({ id, configPath, transform }) => ({ id, configPath, transform })),
      ...(options.watch === undefined ? {} : { watch: options.watch }),
      ...(options.debounceMs === undefined ? {} : { debounceMs: options.debounceMs }),
      ...(options.offLoopSlots === undefined ? {} : { offLoopSlots: options.offLoopSlots }),
      ...(known.size === 0 ? {} : { known: Object.fromEntries(known) }),
      ...(options.setAside && Object.keys(options.setAside).length > 0 ? { setAside: options.setAside } : {}),
    },
    level: options.log.level as pino.LevelWithSilent,
  };
}

/**
 * An error as the transform process sent it, made again on this side. One without a code is a
 * fault of hookd's own there: its message goes to the log (the caller's), not to the sender.
 */
export function errorOf(wire: WireError): HookdError {
  if ('message' in wire) return failed('the transform process failed (the gateway log has why)');
  return hookdError(
    wire.code,
    wire.params as ErrorParams<ErrorCode>,
    wire.headers ? { headers: { ...wire.headers } } : {},
  );
}

export const failed = (reason: string) => hookdError('TRANSFORM_FAILED', { reason });

/** A line the transform process logged, written by the gateway's logger with its own bindings. */
export function relay(log: Logger, line: string): void {
  try {
    const { level, msg, time: _time, pid: _pid, ...fields } = JSON.parse(line) as Record<string, unknown>;
    const label = pino.levels.labels[level as number] as pino.Level | undefined;
    if (label) log[label](fields, typeof msg === 'string' ? msg : '');
  } catch {
    // Not a line of pino's: nothing to relay.
  }
}

/** An error as it crosses: a coded one keeps its code and values, anything else its message. */
export function wireError(err: unknown): WireError {
  if (isHookdError(err))
    return {
      code: err.code,
      params: err.params,
      ...(Object.keys(err.headers).length > 0 ? { headers: err.headers } : {}),
    };
  return { message: err instanceof Error ? err.message : String(err) };
}
