import { type Config, configInvalid } from '../config/index.js';
import { hookdError, isHookdError } from '../errors.js';
import type { CompiledMapping } from '../mapping/index.js';
import { type Bundle, bundleMapOf, type CompiledTransform, compileTransform } from './compile.js';
import type { ConsoleSink } from './console.js';
import { resolveTransformModule } from './resolve.js';
import type { Semaphore } from './semaphore.js';
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
}

type Loaded = { readonly slot?: TransformSlot; readonly compiled?: Bundle; readonly problems?: readonly string[] };

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

  const results = await Promise.all(
    options.mappings.map(async ({ id, configPath, transform }): Promise<Loaded> => {
      if (!transform) return {};
      const where = `${configPath}.transform.module`;
      // A preset's transform is contained in its preset's folder, a user's in transformsDir.
      const root = transform.root ?? transformsDir;
      const resolved = resolveTransformModule(root, transform.module, folderName(root, transformsDir));
      let file: string;
      let bundle: Pick<CompiledTransform, 'code' | 'map'>;
      let compiled: Bundle | undefined;
      try {
        if ('problem' in resolved) throw hookdError('TRANSFORM_COMPILE_FAILED', { problems: [resolved.problem] });
        file = resolved.file;
        const made = await compileOnce(file, root);
        bundle = made;
        compiled = { code: made.code, mapText: made.mapText };
      } catch (err) {
        if (!isHookdError(err, 'TRANSFORM_COMPILE_FAILED')) throw err;
        const problems = err.params.problems.map((p) => `${where}: ${p}`);
        const known = options.known?.[id];
        if (!known) return { problems };
        options.onKept?.(id, problems);
        file = 'file' in resolved ? resolved.file : transform.module;
        bundle = { code: known.code, map: bundleMapOf(known) };
      }
      const onLeaveLoop = options.onLeaveLoop ? () => options.onLeaveLoop?.(id) : undefined;
      const slot = createTransformSlot({
        key: id,
        file,
        module: transform.module,
        root,
        ...bundle,
        limits: config.hooks.transforms,
        exportName: transform.export,
        console: options.consoleFor(id),
        ...(onLeaveLoop ? { onLeaveLoop } : {}),
        ...(options.gate ? { gate: options.gate } : {}),
      });
      return { slot, ...(compiled ? { compiled } : {}) };
    }),
  );
  const problems = results.flatMap((r) => r.problems ?? []);
  if (problems.length > 0) throw configInvalid(problems, config.file);
  const slots = new Map(results.flatMap((r) => (r.slot ? [[r.slot.key, r.slot] as const] : [])));

  const loaded = await Promise.allSettled([...slots.values()].map((slot) => slot.warm()));
  const loadProblems = loaded.flatMap((result, i) =>
    result.status === 'rejected' ? [`${[...slots.values()][i]?.file}: ${(result.reason as Error).message}`] : [],
  );
  if (loadProblems.length > 0) {
    for (const slot of slots.values()) slot.dispose();
    throw configInvalid(loadProblems, config.file);
  }
  for (const { slot, compiled } of results) if (slot && compiled) options.onBundle?.(slot.key, compiled);
  return slots;
}

/** How problems name a transform's folder: `hooks.transformsDir`, or a preset's own. */
export function folderName(root: string, transformsDir: string): string {
  return root === transformsDir ? 'hooks.transformsDir' : `the preset's folder (${root})`;
}
