import { availableParallelism } from 'node:os';
import { hookdError, isHookdError } from '../errors.js';
import type { Logger } from '../log.js';
import type { CompiledMapping, TransformContext, TransformRunner } from '../mapping/index.js';
import { type Bundle, compileTransform } from './compile.js';
import { CONSOLE_LEVELS, type ConsoleSink } from './console.js';
import { folderName, type LoadTransformsOptions, loadingNew, loadTransforms, type TransformsConfig } from './load.js';
import { resolveTransformModule } from './resolve.js';
import { createSemaphore } from './semaphore.js';
import { isSetAside, type OnLoading, SET_ASIDE_PROBLEM, type SetAside } from './set-aside.js';
import { OFF_LOOP_FOR_MS, ON_LOOP_SLICE_MS, type TransformSlot } from './slot.js';
import { type TransformsWatch, watchTransforms } from './watch.js';

export interface TransformHostOptions {
  readonly config: TransformsConfig;
  /** The mappings whose transforms to compile, each run under its id. */
  readonly mappings: readonly Pick<CompiledMapping, 'id' | 'configPath' | 'transform'>[];
  readonly log: Logger;
  /** Recompile changed files while serving (default false; `serve` turns it on). */
  readonly watch?: boolean;
  /** Quiet period before a change is recompiled. */
  readonly debounceMs?: number;
  /** Called with each call's duration (the transform duration histogram). */
  readonly observe?: (key: string, seconds: number) => void;
  /** Told each time the transform process ends, and how (`SIGABRT`, `exit code 1`, `no answer`). */
  readonly onProcessEnd?: (end: string) => void;
  /** Calls running off the event loop at once, across mappings (default: one per spare core). */
  readonly offLoopSlots?: number;
  /** A restarted transform process's last good bundles, by mapping id (docs/transforms.md#isolation). */
  readonly known?: LoadTransformsOptions['known'];
  /** Told each mapping's bundle as it is loaded or swapped in (the transform process tells the gateway). */
  readonly onBundle?: (key: string, bundle: Bundle) => void;
  /** Code that ended a transform process while it loaded, by mapping: neither loaded nor swapped in. */
  readonly setAside?: SetAside;
  /** Told before an isolate loads a mapping's new code, and after (the transform process tells the gateway). */
  readonly onLoading?: OnLoading;
}

/** The sandbox host: compiles every mapping's transform and runs it in a warm isolate. */
export interface TransformHost extends TransformRunner {
  readonly size: number;
  /** Recompiles every transform; swaps those whose code changed; keeps the last good version on errors. */
  reload(): Promise<void>;
  close(): void;
}

const KEPT = 'transform recompile failed; keeping the last good version';

/** A call's answer: a failure never gets here (the sandbox throws it as TRANSFORM_FAILED, located). */
type Envelope = { readonly ok: true; readonly value?: unknown };

/** Compiles every transform before anything listens; throws CONFIG_INVALID with file:line:col. */
export async function createTransformHost(options: TransformHostOptions): Promise<TransformHost> {
  const { config } = options;
  const limits = config.hooks.transforms;
  const log = options.log.child({ component: 'transforms' });
  const slots = await loadTransforms({
    config,
    mappings: options.mappings,
    gate: createSemaphore(options.offLoopSlots ?? Math.max(1, availableParallelism() - 1)),
    onLeaveLoop: (key) =>
      log.info(
        { mapping: key, sliceMs: ON_LOOP_SLICE_MS, forMs: OFF_LOOP_FOR_MS },
        'a transform call needed more than the event-loop slice; its calls run off the loop for a while',
      ),
    consoleFor: (key) => transformConsole(log, key),
    ...(options.known ? { known: options.known } : {}),
    onKept: (key, problems) => log.error({ mapping: key, problems }, KEPT),
    ...(options.onBundle ? { onBundle: options.onBundle } : {}),
    ...(options.setAside ? { setAside: options.setAside } : {}),
    ...(options.onLoading ? { onLoading: options.onLoading } : {}),
  });
  const calls: HostCalls = { slots, timeoutMs: limits.timeoutMs, observe: options.observe };
  const reload = () => reloadTransforms(slots, { ...options, transformsDir: config.hooks.transformsDir, log });
  const watch: TransformsWatch | undefined =
    // Only the user's folder is watched: a preset's transform ships with hookd.
    options.watch && [...slots.values()].some((slot) => slot.root === config.hooks.transformsDir)
      ? watchTransforms(config.hooks.transformsDir, { debounceMs: options.debounceMs ?? 100, log, onChange: reload })
      : undefined;

  return {
    run: (key, context, budgetMs) => runTransform(calls, key, context, budgetMs),
    timeoutMs: limits.timeoutMs,
    reload,
    get size() {
      return slots.size;
    },
    close() {
      watch?.close();
      for (const slot of slots.values()) slot.dispose();
    },
  };
}

/** Where one mapping's `console.*` goes: the host's log at the host's levels, under the mapping's id. */
export function transformConsole(log: Logger, key: string): ConsoleSink {
  return {
    enabled: CONSOLE_LEVELS.filter((level) => log.isLevelEnabled(level)),
    // The level and the bindings are the host's: a transform chooses neither.
    write: (level, text) => log[level]({ mapping: key, source: 'console' }, text),
    dropped: (lines) => log.warn({ mapping: key, dropped: lines }, 'transform console lines over the budget dropped'),
  };
}

/** What a host's calls read: the slots by mapping id, the time limit, and who is told each call's duration. */
export interface HostCalls {
  readonly slots: ReadonlyMap<string, TransformSlot>;
  readonly timeoutMs: number;
  readonly observe?: ((key: string, seconds: number) => void) | undefined;
}

/** `TransformHost.run`: the transform of mapping `key` called on `context`, its result's value. */
export async function runTransform(
  calls: HostCalls,
  key: string,
  context: TransformContext,
  budgetMs?: number,
): Promise<unknown> {
  const slot = calls.slots.get(key);
  if (!slot) throw hookdError('TRANSFORM_FAILED', { reason: `no transform is loaded for ${key}` });
  const answer = await callSlot(calls, slot, context, budgetMs);
  try {
    return (JSON.parse(answer) as Envelope).value;
  } catch {
    // Never a plain SyntaxError (500 INTERNAL without a site): what crossed is the transform's failure.
    throw hookdError('TRANSFORM_FAILED', { reason: 'its answer is not JSON' });
  }
}

/**
 * Calls the sandbox within the smaller of `budgetMs` and the time limit. Its failures (thrown,
 * time-out, memory, a rebuild that fails to load) are TRANSFORM_FAILED; the HTTP layer logs them
 * with the mapping, once per interval.
 */
async function callSlot(
  calls: HostCalls,
  slot: TransformSlot,
  context: TransformContext,
  budgetMs?: number,
): Promise<string> {
  try {
    const { rawBody, payloadIsJsonOfRawBody, payload, ...rest } = context;
    const input = JSON.stringify(payloadIsJsonOfRawBody ? rest : { ...rest, payload });
    const timeout = Math.max(1, Math.min(calls.timeoutMs, Math.ceil(budgetMs ?? calls.timeoutMs)));
    const started = performance.now();
    const answer = await slot.call(input, rawBody, timeout);
    calls.observe?.(slot.key, (performance.now() - started) / 1000);
    return answer;
  } catch (err) {
    // TRANSFORM_BUSY goes out as it is: the sender retries, nothing is kept.
    if (isHookdError(err, 'TRANSFORM_FAILED')) throw err;
    if (isHookdError(err, 'TRANSFORM_LOAD_FAILED')) {
      const { reason, ...site } = err.params;
      throw hookdError('TRANSFORM_FAILED', { reason: `failed while loading: ${reason}`, ...site }, { cause: err });
    }
    if (isHookdError(err, 'TRANSFORM_EXPORT_MISSING'))
      throw hookdError('TRANSFORM_FAILED', { reason: err.message }, { cause: err });
    throw err;
  }
}

/** Recompiles every slot's module; swaps those whose code changed; keeps the last good version on errors. */
export async function reloadTransforms(
  slots: ReadonlyMap<string, TransformSlot>,
  options: Pick<TransformHostOptions, 'onBundle' | 'setAside' | 'onLoading'> & {
    readonly transformsDir: string;
    readonly log: Logger;
  },
): Promise<void> {
  const { transformsDir, log, onBundle } = options;
  for (const slot of slots.values()) {
    try {
      // The same containment as at start: no absolute path, no .., no symlink out of the folder.
      const folder = folderName(slot.root, transformsDir);
      const resolved = resolveTransformModule(slot.root, slot.module, folder);
      if ('problem' in resolved) throw hookdError('TRANSFORM_COMPILE_FAILED', { problems: [resolved.problem] });
      const { code, map, mapText } = await compileTransform(resolved.file, slot.root, folder);
      if (code === slot.code) continue;
      if (isSetAside(options.setAside, slot.key, code))
        throw hookdError('TRANSFORM_COMPILE_FAILED', { problems: [SET_ASIDE_PROBLEM] });
      // Calls already running on old isolates finish there; then those go.
      await loadingNew(options.onLoading, slot.key, code, () => slot.swap(code, map));
      onBundle?.(slot.key, { code, mapText });
      log.info({ mapping: slot.key }, 'transform reloaded');
    } catch (err) {
      const problems = isHookdError(err, 'TRANSFORM_COMPILE_FAILED') ? err.params.problems : [(err as Error).message];
      log.error({ mapping: slot.key, problems }, KEPT);
    }
  }
}
