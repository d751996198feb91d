import { type Config, configInvalid } from '../config/index.js';
import { hookdError, isHookdError } from '../errors.js';
import type { CompiledMapping } from '../mapping/index.js';
import { type Bundle, bundleMapOf, type CompiledTransform, compileTransform } from './compile.js';
import type { ConsoleSink } from './console.js';
import { resolveTransformModule } from './resolve.js';
import type { Semaphore } from './semaphore.js';
import { codeHash, isSetAside, type OnLoading, SET_ASIDE_PROBLEM, type SetAside } from './set-aside.js';
import { createTransformSlot, type TransformSlot } from './slot.js';

/** What transforms read of the config: `hooks.transformsDir`, `hooks.transforms` (the limits), the file. */
export interface TransformsConfig {
  readonly hooks: Pick<Config['hooks'], 'transformsDir' | 'transforms'>;
  readonly file?: string | undefined;
}

export interface LoadTransformsOptions {
  readonly config: TransformsConfig;
  readonly mappings: readonly Pick<CompiledMapping, 'id' | 'configPath' | 'transform'>[];
  /** Where a transform's `console.*` goes, by mapping id. */
  readonly consoleFor: (key: string) => ConsoleSink;
  /** Told when a mapping's calls move off the event loop. */
  readonly onLeaveLoop?: (key: string) => void;
  /** Shared by every slot: the calls running off the event loop at once. */
  readonly gate?: Semaphore;
  /**
   * The bundles a transform process ran before it ended, by mapping id: a restarted one loads
   * these where a module no longer compiles, as a reload keeps the last good version.
   */
  readonly known?: Readonly<Record<string, Bundle>>;
  /** Told where a known bundle stands in for a module that does not compile now, and why. */
  readonly onKept?: (key: string, problems: readonly string[]) => void;
  /** Told each mapping's newly compiled bundle, once every transform loaded. */
  readonly onBundle?: (key: string, bundle: Bundle) => void;
  /** Code that ended a transform process while it loaded, by mapping: not loaded again (set-aside.ts). */
  readonly setAside?: SetAside;
  /** Told before an isolate loads a mapping's newly compiled code, and after. */
  readonly onLoading?: OnLoading;
}

/**
 * Compiles every mapping's transform (a module used by several mappings once, all in
 * parallel), then loads each in its sandbox, so that a module that throws at load stops
 * start-up and first calls are warm. Throws CONFIG_INVALID naming every problem.
 */
export async function loadTransforms(options: LoadTransformsOptions): Promise<Map<string, TransformSlot>> {
  const { config } = options;
  const transformsDir = config.hooks.transformsDir;
  const compiles = new Map<string, Promise<CompiledTransform>>();
  const compileOnce = (file: string, root: string) => {
    if (!compiles.has(file)) compiles.set(file, compileTransform(file, root, folderName(root, transformsDir)));
    return compiles.get(file) as Promise<CompiledTransform>;
  };
  // Compiled side by side, loaded one at a time: a process that ends while it loads knows which code did it.
  const turn = oneAtATime();
  const results = await Promise.all(options.mappings.map((mapping) => loadOne(options, mapping, compileOnce, turn)));
  const slots = new Map(results.flatMap((r) => (r.slot ? [[r.slot.key, r.slot] as const] : [])));
  const problems = [...results.flatMap((r) => r.problems ?? []), ...results.flatMap((r) => r.loadProblems ?? [])];
  if (problems.length > 0) {
    for (const slot of slots.values()) slot.dispose();
    throw configInvalid(problems, config.file);
  }
  for (const { slot, compiled } of results) if (slot && compiled) options.onBundle?.(slot.key, compiled);
  return slots;
}

type Loaded = {
  readonly slot?: TransformSlot;
  /** The bundle compiled now (not a known one): the transform process reports it. */
  readonly compiled?: Bundle;
  readonly problems?: readonly string[];
  readonly loadProblems?: readonly string[];
};
type Mapping = LoadTransformsOptions['mappings'][number];

/** One mapping's slot, warm: compiled now, or its known bundle where what is on disk does not compile or load. */
async function loadOne(
  options: LoadTransformsOptions,
  { id, configPath, transform }: Mapping,
  compileOnce: (file: string, root: string) => Promise<CompiledTransform>,
  turn: Turn,
): Promise<Loaded> {
  if (!transform) return {};
  const where = `${configPath}.transform.module`;
  const transformsDir = options.config.hooks.transformsDir;
  // A preset's transform is contained in its preset's folder, a user's in transformsDir.
  const root = transform.root ?? transformsDir;
  const resolved = resolveTransformModule(root, transform.module, folderName(root, transformsDir));
  const file = 'file' in resolved ? resolved.file : transform.module;
  // A plain object from JSON: a mapping id such as `constructor` is not one of its own keys.
  const known = options.known && Object.hasOwn(options.known, id) ? options.known[id] : undefined;
  const slotOf = (bundle: Pick<CompiledTransform, 'code' | 'map'>) => {
    const onLeaveLoop = options.onLeaveLoop ? () => options.onLeaveLoop?.(id) : undefined;
    return createTransformSlot({
      key: id,
      file,
      module: transform.module,
      root,
      ...bundle,
      limits: options.config.hooks.transforms,
      exportName: transform.export,
      console: options.consoleFor(id),
      ...(onLeaveLoop ? { onLeaveLoop } : {}),
      ...(options.gate ? { gate: options.gate } : {}),
    });
  };
  const fromKnown = async (problems: readonly string[], bundle: Bundle): Promise<Loaded> => {
    options.onKept?.(id, problems);
    const slot = slotOf({ code: bundle.code, map: bundleMapOf(bundle) });
    try {
      await turn(() => slot.warm());
      return { slot };
    } catch (err) {
      return { slot, loadProblems: [`${file}: ${(err as Error).message}`] };
    }
  };
  let made: CompiledTransform;
  try {
    if ('problem' in resolved) throw hookdError('TRANSFORM_COMPILE_FAILED', { problems: [resolved.problem] });
    made = await compileOnce(resolved.file, root);
  } catch (err) {
    if (!isHookdError(err, 'TRANSFORM_COMPILE_FAILED')) throw err;
    const problems = err.params.problems.map((p) => `${where}: ${p}`);
    return known ? fromKnown(problems, known) : { problems };
  }
  if (isSetAside(options.setAside, id, made.code)) {
    const problems = [`${where}: ${file}: ${SET_ASIDE_PROBLEM}`];
    return known ? fromKnown(problems, known) : { problems };
  }
  const slot = slotOf(made);
  try {
    await turn(() => loadingNew(options.onLoading, id, made.code, () => slot.warm()));
    return { slot, compiled: { code: made.code, mapText: made.mapText } };
  } catch (err) {
    const problem = `${file}: ${(err as Error).message}`;
    if (!known || known.code === made.code) return { slot, loadProblems: [problem] };
    slot.dispose();
    return fromKnown([problem], known);
  }
}

type Turn = <T>(run: () => Promise<T>) => Promise<T>;

/** Runs what it is given one after another, each once the one before settled. */
function oneAtATime(): Turn {
  let last: Promise<unknown> = Promise.resolve();
  return (run) => {
    const next = last.then(run, run);
    last = next.catch(() => undefined);
    return next;
  };
}

/** Loads a mapping's new code with `load`, telling `onLoading` before (its hash) and after. */
export async function loadingNew(
  onLoading: OnLoading | undefined,
  key: string,
  code: string,
  load: () => Promise<void>,
): Promise<void> {
  onLoading?.(key, codeHash(code));
  try {
    await load();
  } finally {
    onLoading?.(key, undefined);
  }
}

/** How problems name a transform's folder: `hooks.transformsDir`, or a preset's own. */
export function folderName(root: string, transformsDir: string): string {
  return root === transformsDir ? 'hooks.transformsDir' : `the preset's folder (${root})`;
}
