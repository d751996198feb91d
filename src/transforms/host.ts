import { type FSWatcher, watch } from 'node:fs';
import { type Config, configInvalid } from '../config/index.js';
import { type HookdError, hookdError, isHookdError } from '../errors.js';
import type { Logger } from '../log.js';
import type { CompiledMapping, TransformContext, TransformRunner } from '../mapping/index.js';
import { type CompiledTransform, compileTransform } from './compile.js';
import { resolveTransformModule } from './resolve.js';
import { createSandbox, type Sandbox } from './sandbox.js';

interface Entry {
  readonly key: string;
  readonly file: string;
  readonly exportName: string | undefined;
  code: string;
  sandbox?: Sandbox;
  building?: Promise<Sandbox>;
}

export interface TransformHostOptions {
  /** `hooks.transformsDir` and `hooks.transforms` (the limits). */
  readonly config: Pick<Config, 'hooks' | 'file'>;
  /** The mappings whose transforms to compile, each run under its id. */
  readonly mappings: readonly Pick<CompiledMapping, 'id' | 'configPath' | 'transform'>[];
  readonly log: Logger;
  /** Recompile changed files while serving (default false; `serve` turns it on). */
  readonly watch?: boolean;
  /** Quiet period before a change is recompiled. */
  readonly debounceMs?: number;
  /** Called with each call's duration (the transform duration histogram). */
  readonly observe?: (key: string, seconds: number) => void;
}

/** The sandbox host: compiles every mapping's transform and runs it in a warm isolate. */
export interface TransformHost extends TransformRunner {
  readonly size: number;
  /** Recompiles every transform; swaps those whose code changed; keeps the last good version on errors. */
  reload(): Promise<void>;
  close(): void;
}

/** Compiles every transform before anything listens; throws CONFIG_INVALID with file:line:col. */
export async function createTransformHost(options: TransformHostOptions): Promise<TransformHost> {
  const { config } = options;
  const limits = config.hooks.transforms;
  const transformsDir = config.hooks.transformsDir;
  const log = options.log.child({ component: 'transforms' });
  const problems: string[] = [];
  const entries = new Map<string, Entry>();

  // Every transform compiles at once (a module used by several mappings, once), in parallel.
  const compiles = new Map<string, Promise<CompiledTransform>>();
  const results = await Promise.all(
    options.mappings.map(async (mapping) => {
      if (!mapping.transform) return;
      const where = `${mapping.configPath}.transform.module`;
      const resolved = resolveTransformModule(transformsDir, mapping.transform.module);
      if ('problem' in resolved) return { problems: [`${where}: ${resolved.problem}`] };
      if (!compiles.has(resolved.file)) compiles.set(resolved.file, compileTransform(resolved.file, transformsDir));
      try {
        const compiled = await compiles.get(resolved.file);
        const entry: Entry = {
          key: mapping.id,
          file: resolved.file,
          exportName: mapping.transform.export,
          code: compiled?.code ?? '',
        };
        return { entry };
      } catch (err) {
        if (!isHookdError(err, 'TRANSFORM_COMPILE_FAILED')) throw err;
        return { problems: err.params.problems.map((p) => `${where}: ${p}`) };
      }
    }),
  );
  for (const result of results) {
    if (result?.entry) entries.set(result.entry.key, result.entry);
    if (result?.problems) problems.push(...result.problems);
  }
  if (problems.length > 0) throw configInvalid(problems, config.file);

  const consoleFor = (key: string) => (level: 'debug' | 'info' | 'warn' | 'error', text: string) =>
    log[level]({ mapping: key, source: 'console' }, text);

  function build(entry: Entry): Promise<Sandbox> {
    const code = entry.code;
    entry.building ??= createSandbox(code, entry.exportName, limits, consoleFor(entry.key))
      .then((sandbox) => {
        // A reload swapped in newer code meanwhile: keep that one, drop this rebuild.
        if (entry.code !== code && entry.sandbox && !entry.sandbox.disposed) {
          sandbox.dispose();
          return entry.sandbox;
        }
        entry.sandbox = sandbox;
        return sandbox;
      })
      .finally(() => {
        entry.building = undefined;
      });
    return entry.building;
  }

  // Load every sandbox now, so a module that throws at load stops start-up and first calls are warm.
  const loaded = await Promise.allSettled([...entries.values()].map(build));
  const loadProblems = loaded.flatMap((result, i) =>
    result.status === 'rejected' ? [`${[...entries.values()][i]?.file}: ${(result.reason as Error).message}`] : [],
  );
  if (loadProblems.length > 0) {
    for (const entry of entries.values()) entry.sandbox?.dispose();
    throw configInvalid(loadProblems, config.file);
  }

  async function run(key: string, context: TransformContext, budgetMs?: number): Promise<unknown> {
    const entry = entries.get(key);
    if (!entry) throw hookdError('TRANSFORM_FAILED', { reason: `no transform is loaded for ${key}` });
    let answer: string;
    try {
      const sandbox = entry.sandbox && !entry.sandbox.disposed ? entry.sandbox : await build(entry);
      const { rawBody, payloadIsJsonOfRawBody, payload, ...rest } = context;
      const input = JSON.stringify(payloadIsJsonOfRawBody ? rest : { ...rest, payload });
      const started = performance.now();
      answer = sandbox.call(input, rawBody, budgetMs);
      options.observe?.(key, (performance.now() - started) / 1000);
    } catch (err) {
      if (!isHookdError(err, 'TRANSFORM_FAILED', 'TRANSFORM_LOAD_FAILED', 'TRANSFORM_EXPORT_MISSING')) throw err;
      // The sandbox failed (a time-out, its memory limit, a rebuild that failed to load).
      if (entry.sandbox?.disposed) entry.sandbox = undefined;
      const reason =
        err.code === 'TRANSFORM_FAILED' ? (err as HookdError<'TRANSFORM_FAILED'>).params.reason : err.message;
      log.warn({ mapping: key, reason }, 'transform failed');
      throw err.code === 'TRANSFORM_FAILED' ? err : hookdError('TRANSFORM_FAILED', { reason }, { cause: err });
    }
    const envelope = JSON.parse(answer) as { ok: boolean; value?: unknown; error?: string };
    if (!envelope.ok) throw hookdError('TRANSFORM_FAILED', { reason: envelope.error ?? 'the transform threw' });
    return envelope.value;
  }

  async function reload(): Promise<void> {
    for (const entry of entries.values()) {
      try {
        const compiled = await compileTransform(entry.file, transformsDir);
        if (compiled.code === entry.code) continue;
        const sandbox = await createSandbox(compiled.code, entry.exportName, limits, consoleFor(entry.key));
        const old = entry.sandbox;
        entry.code = compiled.code;
        entry.sandbox = sandbox;
        // Calls already running on the old isolate may finish; then it goes.
        if (old) setTimeout(() => old.dispose(), limits.timeoutMs + 100).unref();
        log.info({ mapping: entry.key }, 'transform reloaded');
      } catch (err) {
        const detail = isHookdError(err, 'TRANSFORM_COMPILE_FAILED') ? err.params.problems : [(err as Error).message];
        log.error(
          { mapping: entry.key, problems: detail },
          'transform recompile failed; keeping the last good version',
        );
      }
    }
  }

  let watcher: FSWatcher | undefined;
  let timer: NodeJS.Timeout | undefined;
  let reloading = Promise.resolve();
  if (options.watch && entries.size > 0) {
    watcher = watch(transformsDir, { recursive: true }, () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        reloading = reloading.then(reload);
      }, options.debounceMs ?? 100);
    });
    watcher.on('error', (err) => log.warn({ err: err.message }, 'watching transforms failed'));
  }

  return {
    run,
    timeoutMs: limits.timeoutMs,
    reload,
    get size() {
      return entries.size;
    },
    close() {
      clearTimeout(timer);
      watcher?.close();
      for (const entry of entries.values()) entry.sandbox?.dispose();
    },
  };
}
