import { type ActionOptions, createModelCatalog } from './actions/index.js';
import { channelProblems } from './channels/index.js';
import { type Config, configInvalid } from './config/index.js';
import { isHookdError } from './errors.js';
import type { Logger } from './log.js';
import { collectMappings, createMappingEngine, type MappingEngine } from './mapping/index.js';
import { providerProblems } from './providers/index.js';
import { createProcessTransformHost, createTransformHost, type TransformHost } from './transforms/index.js';

export interface Routes {
  readonly actionOptions: ActionOptions;
  readonly mappings: MappingEngine;
  readonly transforms: TransformHost;
}

/**
 * Checks every channel and provider against its kind's module, and compiles every mapping,
 * template and transform (throws CONFIG_INVALID with paths and file:line:col).
 */
export async function compileRoutes(
  config: Config,
  log: Logger,
  options: {
    watch?: boolean;
    observe?: (mapping: string, seconds: number) => void;
    onProcessEnd?: (end: string) => void;
    /**
     * Honour `hooks.transforms.isolation: "process"` (`serve`; the CLI's one-off commands run
     * their transforms inline, where an abort ends only the command).
     */
    isolate?: boolean;
  } = {},
): Promise<Routes> {
  const actionOptions = {
    models: createModelCatalog(config),
    // A request's `channel` is a lookup in this set (docs/channels.md).
    channels: new Set(Object.keys(config.channels)),
    sessionKeyPrefixes: config.hooks.allowedSessionKeyPrefixes,
  };
  // Broken mappings and broken transforms are reported together: the transforms of the
  // mappings that compiled are loaded either way.
  const collected = collectMappings(config, actionOptions.models);
  const { compiled } = collected;
  const problems = [...channelProblems(config), ...providerProblems(config), ...collected.problems];
  let transforms: TransformHost;
  try {
    const isolated =
      options.isolate && config.hooks.transforms.isolation === 'process' && compiled.some((m) => m.transform);
    const hostOf = isolated ? createProcessTransformHost : createTransformHost;
    transforms = await hostOf({
      config,
      mappings: compiled,
      log,
      watch: options.watch ?? false,
      ...(options.observe ? { observe: options.observe } : {}),
      ...(options.onProcessEnd ? { onProcessEnd: options.onProcessEnd } : {}),
    });
  } catch (err) {
    if (!isHookdError(err, 'CONFIG_INVALID')) throw err;
    throw configInvalid([...problems, ...err.params.problems], config.file);
  }
  if (problems.length > 0) {
    transforms.close();
    throw configInvalid(problems, config.file);
  }
  const mappings = createMappingEngine({ config, mappings: compiled, actionOptions, transforms });
  const unreadable = unreadableSignedBodies(config, mappings);
  if (unreadable.length > 0) {
    transforms.close();
    throw configInvalid(unreadable, config.file);
  }
  return { actionOptions, transforms, mappings };
}

/**
 * A path whose signed bodies may be larger than all unverified bodies together
 * (`hooks.verifiedPaths.maxPendingBytes`) would answer its senders 503 forever: a config error.
 */
function unreadableSignedBodies(config: Config, mappings: MappingEngine): string[] {
  const bound = config.hooks.verifiedPaths.maxPendingBytes;
  // '' stands for every hook name no mapping names (it matches only the mappings without match.path).
  const paths = new Set(['', ...mappings.mappings.flatMap((m) => (m.matchPath === undefined ? [] : [m.matchPath]))]);
  const problems: string[] = [];
  for (const path of paths) {
    const verifier = mappings.verifiersFor(path)[0];
    const limit = mappings.maxBodyBytesFor(path);
    if (verifier && limit > bound)
      problems.push(
        `hooks.verifiedPaths.maxPendingBytes: expected at least ${limit}, the body limit of ${path === '' ? 'the hooks' : `hook ${path}`} that ${verifier.configPath} verifies (a signed body that large could never be read)`,
      );
  }
  return problems;
}
