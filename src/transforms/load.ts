import { type Config, configInvalid } from '../config/index.js';
import { isHookdError } from '../errors.js';
import type { CompiledMapping } from '../mapping/index.js';
import { type CompiledTransform, compileTransform } from './compile.js';
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
}

type Loaded = { readonly slot?: TransformSlot; readonly problems?: readonly string[] };

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
      if ('problem' in resolved) return { problems: [`${where}: ${resolved.problem}`] };
      try {
        const { code, map } = await compileOnce(resolved.file, root);
        const limits = config.hooks.transforms;
        const slotOptions = { key: id, file: resolved.file, module: transform.module, root, code, map, limits };
        const exportName = transform.export;
        const console = options.consoleFor(id);
        const onLeaveLoop = options.onLeaveLoop ? () => options.onLeaveLoop?.(id) : undefined;
        return {
          slot: createTransformSlot({
            ...slotOptions,
            exportName,
            console,
            ...(onLeaveLoop ? { onLeaveLoop } : {}),
            ...(options.gate ? { gate: options.gate } : {}),
          }),
        };
      } catch (err) {
        if (!isHookdError(err, 'TRANSFORM_COMPILE_FAILED')) throw err;
        return { problems: err.params.problems.map((p) => `${where}: ${p}`) };
      }
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
  return slots;
}

/** How problems name a transform's folder: `hooks.transformsDir`, or a preset's own. */
export function folderName(root: string, transformsDir: string): string {
  return root === transformsDir ? 'hooks.transformsDir' : `the preset's folder (${root})`;
}
