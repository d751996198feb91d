import { type FSWatcher, lstatSync, realpathSync, watch } from 'node:fs';
import { basename, dirname } from 'node:path';
import type { Config } from './config/index.js';
import { isHookdError } from './errors.js';
import type { Logger } from './log.js';
import type { LiveMappingEngine } from './mapping/index.js';
import type { Routes } from './routes.js';

/**
 * Reloading the config file while serving (docs/configuration.md#reloading-the-configuration):
 * when the file (or the `.env` beside it) changes, it is read and validated, and its mappings,
 * presets and plugins compiled, before anything changes; the new mappings then take the
 * requests that come next. A file that does not load keeps the running configuration; a change
 * to any other key is logged as applying at the next restart.
 */

/** The keys a reload applies; every other key waits for a restart. */
export const LIVE_KEYS = ['hooks.mappings', 'hooks.presets', 'hooks.plugins'] as const;

export interface ConfigReloadOptions {
  /** The configuration the gateway started with. */
  readonly config: Config & { readonly file: string };
  /** Reads and validates the file again (with the environment and `.env` as at start); throws CONFIG_INVALID. */
  readonly load: () => Config;
  /** Compiles the mappings of a configuration (with its transforms, watched like the first ones). */
  readonly compile: (config: Config) => Promise<Routes>;
  /** The engine the hook routes, replay and the console hold. */
  readonly mappings: LiveMappingEngine;
  /** The routes in force: their transforms are closed once new ones replace them. */
  readonly routes: { current: Routes };
  /** Runs of a mapping at once, at most (`maxConcurrent`), by mapping id: kept up to date. */
  readonly mappingLimits: Map<string, number>;
  readonly log: Logger;
  readonly debounceMs?: number;
}

/** What one reload did. */
export type ReloadOutcome =
  | { readonly kind: 'unchanged' | 'restart-only' }
  | { readonly kind: 'reloaded'; readonly changed: readonly string[] }
  | { readonly kind: 'refused'; readonly problems: readonly string[] };

const stable = (value: unknown) => JSON.stringify(value ?? null);

/** The keys whose values differ (`hooks.*` one level deeper), the file's path left out. */
export function changedKeys(before: Config, after: Config): string[] {
  const changed: string[] = [];
  const compare = (a: Record<string, unknown>, b: Record<string, unknown>, prefix: string) => {
    for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
      const path = `${prefix}${key}`;
      if (path === 'file') continue;
      if (path === 'hooks') compare(a[key] as Record<string, unknown>, b[key] as Record<string, unknown>, 'hooks.');
      else if (stable(a[key]) !== stable(b[key])) changed.push(path);
    }
  };
  compare(before as unknown as Record<string, unknown>, after as unknown as Record<string, unknown>, '');
  return changed.sort();
}

/** `running` with the live keys of `next`: what the gateway runs once they are applied. */
function withLiveKeys(running: Config, next: Config): Config {
  const { mappings, presets, plugins } = next.hooks;
  return { ...running, hooks: { ...running.hooks, mappings, presets, plugins } };
}

/** Reloads on demand; `watchConfigFile` calls it on each change of the file. */
export function createConfigReloader(options: ConfigReloadOptions) {
  const { log } = options;
  let running: Config = options.config;
  return {
    /** Reads the file, and applies its live keys when they changed and compile. */
    async reload(): Promise<ReloadOutcome> {
      let next: Config;
      try {
        next = options.load();
      } catch (err) {
        if (!isHookdError(err, 'CONFIG_INVALID')) throw err;
        log.error({ problems: err.params.problems }, 'configuration reload failed; the running one is kept');
        return { kind: 'refused', problems: err.params.problems };
      }
      const changed = changedKeys(running, next);
      const later = changed.filter((key) => !(LIVE_KEYS as readonly string[]).includes(key));
      if (later.length > 0) log.warn({ keys: later }, 'configuration changed where only a restart applies it');
      const live = changed.filter((key) => (LIVE_KEYS as readonly string[]).includes(key));
      if (live.length === 0) return { kind: changed.length === 0 ? 'unchanged' : 'restart-only' };
      const merged = withLiveKeys(running, next);
      let routes: Routes;
      try {
        routes = await options.compile(merged);
      } catch (err) {
        if (!isHookdError(err, 'CONFIG_INVALID')) throw err;
        log.error({ problems: err.params.problems }, 'configuration reload failed; the running one is kept');
        return { kind: 'refused', problems: err.params.problems };
      }
      const before = options.routes.current;
      options.mappings.swap(routes.mappings);
      options.routes.current = routes;
      // Calls already running in the old sandboxes finish there; then those go.
      before.transforms.close();
      options.mappingLimits.clear();
      for (const m of routes.mappings.mappings)
        if (m.maxConcurrent !== undefined) options.mappingLimits.set(m.id, m.maxConcurrent);
      for (const warning of routes.mappings.mappings.flatMap((m) => m.warnings))
        log.warn({ warning }, 'configuration warning');
      running = merged;
      log.info({ changed: live, mappings: routes.mappings.mappings.length }, 'configuration reloaded');
      return { kind: 'reloaded', changed: live };
    },
  };
}

/**
 * Watches the config file and the `.env` beside it (their folder, not recursively: a store in
 * a folder below writes all the time) and reloads once a burst of changes has been quiet for
 * `debounceMs`; reloads never overlap. SIGHUP reloads too (what `systemctl reload` sends),
 * instead of ending the process.
 */
export function watchConfigFile(options: ConfigReloadOptions): { close(): void } {
  const reloader = createConfigReloader(options);
  const { file } = options.config;
  const names = new Set([basename(file), '.env']);
  // A config that is a symbolic link (a Kubernetes ConfigMap swaps `..data` beside it) changes
  // with any name of its folder, and where it points.
  const linked = isLink(file);
  let timer: NodeJS.Timeout | undefined;
  let running = Promise.resolve();
  const watcher: FSWatcher = watch(dirname(file), (_event, name) => {
    if (linked || name === null || names.has(String(name))) schedule();
  });
  const target = linked ? watchTarget(file, schedule) : undefined;
  const onHangup = () => {
    options.log.info('SIGHUP: reloading the configuration');
    schedule();
  };
  process.on('SIGHUP', onHangup);
  function schedule() {
    clearTimeout(timer);
    timer = setTimeout(() => {
      running = running
        .then(() => reloader.reload())
        .then(
          () => undefined,
          (err: unknown) => options.log.error({ err }, 'configuration reload failed'),
        );
    }, options.debounceMs ?? 100);
  }
  watcher.on('error', (err) => options.log.warn({ err: err.message }, 'watching the configuration failed'));
  return {
    close() {
      clearTimeout(timer);
      process.off('SIGHUP', onHangup);
      watcher.close();
      target?.close();
    },
  };
}

function isLink(file: string): boolean {
  try {
    return lstatSync(file).isSymbolicLink();
  } catch {
    return false;
  }
}

/** Watches the folder of the file a linked config points to, for that file. */
function watchTarget(file: string, changed: () => void): FSWatcher | undefined {
  try {
    const real = realpathSync(file);
    const watcher = watch(dirname(real), (_event, name) => {
      if (name === null || name === basename(real)) changed();
    });
    // Its folder may go (a ConfigMap's old `..data`): the link's own folder still tells.
    watcher.on('error', () => undefined);
    return watcher;
  } catch {
    return undefined;
  }
}
