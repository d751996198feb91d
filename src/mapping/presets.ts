import { existsSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Config, locate } from '../config/index.js';
import { hookdError } from '../errors.js';
import { MAX_PRESET_FILE_BYTES, type Manifest, readManifest } from './manifest.js';
import { presetFolder } from './preset-folder.js';

/** The built-in presets' folder (dist/cli/ sits as deep as src/mapping/, so this holds for both). */
const BUILT_IN_DIR = fileURLToPath(new URL('../../presets/', import.meta.url));

/**
 * A preset plugin (docs/presets.md): a folder of data — `preset.json5` (name, description,
 * version, options schema, signature scheme, mappings), an optional payload schema
 * (`schema.ts`, `export default { … } as const`, which its transform types itself from, or `schema.json`),
 * recorded `fixtures/*.json` and a README. Nothing is read from outside the folder.
 */
export interface Preset extends Manifest {
  /** The folder it was loaded from. */
  readonly dir: string;
  /** Recorded deliveries, read when it loaded. */
  readonly fixtures: readonly PresetFixture[];
  /** Its README's text, when it has one inside its folder. */
  readonly readme?: string;
  /** `file:line:col` of a key of its manifest (`mappings[0].maxBodyBytes`), for messages. */
  readonly place: (path: string) => string;
  /** Set for a plugin (not built in): what the operator's `hooks.plugins` entry grants it. */
  readonly plugin?: { readonly allowUnsafeExternalContent: boolean };
}

/** A recorded delivery of a preset, read when the preset loads (never again from its folder). */
export interface PresetFixture {
  /** Its path in the preset's folder: `fixtures/push.json`. */
  readonly name: string;
  readonly text: string;
}

/** The most one fixture may hold (`POST /api/try` takes 1 MiB), and all of a preset's together. */
const MAX_FIXTURE_BYTES = 1024 * 1024;
const MAX_FIXTURES_BYTES = 16 * 1024 * 1024;

/** A preset folder read whole, and its problems (it is usable only without any). */
function readPreset(dir: string, plugin: boolean): { preset?: Preset; name?: string; problems: string[] } {
  let folder: ReturnType<typeof presetFolder>;
  try {
    folder = presetFolder(dir);
  } catch (err) {
    return { problems: [(err as Error).message] };
  }
  const read = readManifest(folder, plugin);
  const fixtures = folder.jsonFiles('fixtures', MAX_FIXTURE_BYTES, MAX_FIXTURES_BYTES);
  const problems = [...read.problems, ...fixtures.problems.map((p) => `fixtures: ${p}`)];
  const readme = folder.read('README.md', MAX_PRESET_FILE_BYTES);
  if ('problem' in readme) problems.push(`README.md: ${readme.problem}`);
  if (!read.manifest) return { problems, ...(read.name === undefined ? {} : { name: read.name }) };
  // A key the file lacks (a mapping's default schema.ts) is placed at its nearest parent there.
  const place = (path: string) => {
    const at = locate(read.positions, path) ?? { line: 1, column: 1 };
    return `${read.file}:${at.line}:${at.column}`;
  };
  const preset = {
    ...read.manifest,
    dir,
    fixtures: fixtures.files,
    ...('text' in readme ? { readme: readme.text } : {}),
    place,
    ...(plugin ? { plugin: { allowUnsafeExternalContent: false } } : {}),
  };
  return { preset, problems };
}

/** Loads a preset folder (a plugin unless `builtIn`); throws an Error saying what is wrong with it. */
export function loadPreset(dir: string, options: { builtIn?: boolean } = {}): Preset {
  const { preset, problems } = readPreset(dir, !options.builtIn);
  if (!preset || problems.length > 0) throw hookdError('CONFIG_PROBLEM', { problem: problems.join('; ') });
  return preset;
}

let builtIn: ReadonlyMap<string, Preset> | undefined;

/** The presets shipped in `presets/`, by name. */
export function builtInPresets(): ReadonlyMap<string, Preset> {
  builtIn ??= new Map(
    readdirSync(BUILT_IN_DIR, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => loadPreset(join(BUILT_IN_DIR, entry.name), { builtIn: true }))
      .map((preset) => [preset.name, preset] as const),
  );
  return builtIn;
}

type PluginEntry = Config['hooks']['plugins'][number];

/**
 * The presets a config can enable: the built-in ones, and its `hooks.plugins` (an npm package
 * resolved from the config's folder, or a folder), with the problems of plugins that cannot be
 * loaded (their name and why; a problem in a plugin's file is placed there: `file:line:col`).
 */
export function availablePresets(config: Pick<Config, 'hooks' | 'baseDir'>): {
  presets: ReadonlyMap<string, Preset>;
  problems: string[];
  /** The names of plugins that could not be read (an entry enabling one is not "unknown" too). */
  broken: ReadonlySet<string>;
} {
  const presets = new Map(builtInPresets());
  const problems: string[] = [];
  const broken = new Set<string>();
  config.hooks.plugins.forEach((entry: PluginEntry, i) => {
    const { name, allowUnsafeExternalContent = false } = typeof entry === 'string' ? { name: entry } : entry;
    const at = `hooks.plugins[${i}]${typeof entry === 'string' ? '' : '.name'}`;
    const say = (problem: string) => {
      // `hooks.plugins[0]: /…/preset.json5:4:3: plugin "x": mappings[0].id: …`, placed in the plugin's file.
      const inFile = /^(\/[^:\n]+:\d+:\d+: )([\s\S]*)$/.exec(problem);
      problems.push(`${at}: ${inFile?.[1] ?? ''}plugin ${JSON.stringify(name)}: ${inFile?.[2] ?? problem}`);
    };
    let dir: string;
    try {
      dir = pluginDir(name, config.baseDir);
    } catch (err) {
      say((err as Error).message);
      return;
    }
    const read = readPreset(dir, true);
    read.problems.forEach(say);
    const { preset } = read;
    if (!preset) {
      if (read.name !== undefined) broken.add(read.name);
      return;
    }
    if (builtInPresets().has(preset.name)) say(`its name "${preset.name}" is a built-in preset's`);
    else if (presets.has(preset.name)) say(`its name "${preset.name}" is another plugin's`);
    else presets.set(preset.name, { ...preset, plugin: { allowUnsafeExternalContent } });
  });
  return { presets, problems, broken };
}

/** A plugin's folder: a path (relative to the config's folder), or an npm package's root. */
function pluginDir(plugin: string, baseDir: string): string {
  if (plugin.startsWith('.') || isAbsolute(plugin)) {
    const dir = resolve(baseDir, plugin);
    if (!existsSync(dir)) throw hookdError('CONFIG_PROBLEM', { problem: `no such folder: ${dir}` });
    return dir;
  }
  try {
    return dirname(createRequire(join(baseDir, 'hookd.config.js')).resolve(`${plugin}/package.json`));
  } catch {
    throw hookdError('CONFIG_PROBLEM', {
      problem: `no npm package ${JSON.stringify(plugin)} is installed where the config is (npm install ${plugin})`,
    });
  }
}
