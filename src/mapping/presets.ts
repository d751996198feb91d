import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv, type ValidateFunction } from 'ajv';
import JSON5 from 'json5';
import { type Config, didYouMean, type MappingConfig } from '../config/index.js';

/** The built-in presets' folder (dist/cli/ sits as deep as src/mapping/, so this holds for both). */
const BUILT_IN_DIR = fileURLToPath(new URL('../../presets/', import.meta.url));

/**
 * A preset plugin (docs/presets.md): a folder of data — `preset.json5` (name, description,
 * version, options schema, signature scheme, mappings), an optional payload schema
 * (`schema.ts`, `export default { … } as const`, which its transform types itself from, or `schema.json`),
 * recorded `fixtures/*.json` and a README.
 */
export interface Preset {
  readonly name: string;
  readonly description: string;
  readonly version: string;
  /** A JSON Schema of the preset's own options (the keys of its `hooks.presets` entry). */
  readonly options?: { readonly properties?: Readonly<Record<string, unknown>> };
  /** The signature scheme its senders use, and which option holds the secret. */
  readonly verify?: { readonly scheme: NonNullable<MappingConfig['verify']>['scheme']; readonly secretOption: string };
  readonly mappings: readonly MappingConfig[];
  /** The folder it was loaded from. */
  readonly dir: string;
  /** Recorded deliveries, absolute paths. */
  readonly fixtures: readonly string[];
}

/** The manifest's check, compiled when the first preset is loaded: ajv's compiler costs about 100 ms. */
let manifestCheck: ValidateFunction | undefined;
const validateManifest = () =>
  (manifestCheck ??= new Ajv({ allErrors: true, strict: false }).compile({
    type: 'object',
    required: ['name', 'description', 'version', 'mappings'],
    additionalProperties: false,
    properties: {
      name: { type: 'string', pattern: '^[a-z0-9][a-z0-9-]*$' },
      description: { type: 'string', minLength: 1 },
      version: { type: 'string', minLength: 1 },
      options: { type: 'object' },
      verify: {
        type: 'object',
        required: ['scheme', 'secretOption'],
        additionalProperties: false,
        properties: { scheme: { type: 'string' }, secretOption: { type: 'string', minLength: 1 } },
      },
      mappings: { type: 'array', minItems: 1, items: { type: 'object' } },
    },
  }));

/** Loads a preset folder; throws an Error saying what is wrong with it. */
export function loadPreset(dir: string): Preset {
  const file = join(dir, 'preset.json5');
  if (!existsSync(file)) throw new Error(`${dir} has no preset.json5`);
  const manifest = JSON5.parse(readFileSync(file, 'utf8')) as Omit<Preset, 'dir' | 'fixtures'>;
  const check = validateManifest();
  if (!check(manifest)) {
    const why = (check.errors ?? []).map((e) => `${e.instancePath || '(root)'} ${e.message}`).join('; ');
    throw new Error(`${file}: ${why}`);
  }
  const schema = ['schema.ts', 'schema.json'].map((f) => join(dir, f)).find((f) => existsSync(f));
  const fixturesDir = join(dir, 'fixtures');
  const fixtures = existsSync(fixturesDir)
    ? readdirSync(fixturesDir)
        .filter((f) => f.endsWith('.json'))
        .sort()
        .map((f) => join(fixturesDir, f))
    : [];
  return {
    ...manifest,
    // A payload schema beside the manifest applies to every mapping that has none of its own.
    mappings: manifest.mappings.map((m) => (m.schema === undefined && schema ? { ...m, schema } : m)),
    dir,
    fixtures,
  };
}

let builtIn: ReadonlyMap<string, Preset> | undefined;

/** The presets shipped in `presets/`, by name. */
export function builtInPresets(): ReadonlyMap<string, Preset> {
  builtIn ??= new Map(
    readdirSync(BUILT_IN_DIR, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => loadPreset(join(BUILT_IN_DIR, entry.name)))
      .map((preset) => [preset.name, preset] as const),
  );
  return builtIn;
}

/**
 * The presets a config can enable: the built-in ones, and its `hooks.plugins` (an npm package
 * resolved from the config's folder, or a folder), with the problems of plugins that cannot be
 * loaded (their name and why).
 */
export function availablePresets(config: Pick<Config, 'hooks' | 'baseDir'>): {
  presets: ReadonlyMap<string, Preset>;
  problems: string[];
} {
  const presets = new Map(builtInPresets());
  const problems: string[] = [];
  config.hooks.plugins.forEach((plugin, i) => {
    const at = `hooks.plugins[${i}]`;
    try {
      const preset = loadPreset(pluginDir(plugin, config.baseDir));
      if (builtInPresets().has(preset.name)) throw new Error(`its name "${preset.name}" is a built-in preset's`);
      if (presets.has(preset.name)) throw new Error(`its name "${preset.name}" is another plugin's`);
      presets.set(preset.name, preset);
    } catch (err) {
      problems.push(`${at}: plugin ${JSON.stringify(plugin)}: ${(err as Error).message}`);
    }
  });
  return { presets, problems };
}

/** A plugin's folder: a path (relative to the config's folder), or an npm package's root. */
function pluginDir(plugin: string, baseDir: string): string {
  if (plugin.startsWith('.') || isAbsolute(plugin)) {
    const dir = resolve(baseDir, plugin);
    if (!existsSync(dir)) throw new Error(`no such folder: ${dir}`);
    return dir;
  }
  try {
    return dirname(createRequire(join(baseDir, 'hookd.config.js')).resolve(`${plugin}/package.json`));
  } catch {
    throw new Error(
      `no npm package ${JSON.stringify(plugin)} is installed where the config is (npm install ${plugin})`,
    );
  }
}

/** The keys every `hooks.presets` entry may carry, applied to each of the preset's mappings. */
const COMMON_KEYS = ['name', 'secret', 'path', 'sessionKey', 'model', 'thinking', 'deliver', 'to'] as const;
const OVERRIDES = ['sessionKey', 'model', 'thinking', 'deliver', 'to', 'allowUnsafeExternalContent'] as const;

type Entry = Config['hooks']['presets'][number];

/** An entry's name and options, whether written as a name or as an object. */
function presetEntry(entry: Entry): { name: string; options: Readonly<Record<string, unknown>> } {
  return typeof entry === 'string' ? { name: entry, options: {} } : { name: entry.name, options: entry };
}

/**
 * The enabled presets as mappings (`match.path` defaulting to the preset's name, the entry's
 * overrides applied, `hooks.mail` applied to `mail`), each with its place in `hooks.presets`,
 * and the problems of the entries that cannot be used (an unknown preset or option).
 */
export function presetMappings(config: Pick<Config, 'hooks' | 'baseDir'>): {
  mappings: { mapping: MappingConfig; index: number; root: string; options: Readonly<Record<string, unknown>> }[];
  problems: string[];
} {
  // Reading the presets' folders costs about 70 ms: a config that names none never pays.
  if (config.hooks.presets.length === 0 && config.hooks.plugins.length === 0) return { mappings: [], problems: [] };
  const { presets, problems } = availablePresets(config);
  const mappings = config.hooks.presets.flatMap((entry, index) => {
    const { name, options } = presetEntry(entry);
    const at = `hooks.presets[${index}]`;
    const preset = presets.get(name);
    if (!preset) {
      const guess = didYouMean(name, presets.keys());
      const known = [...presets.keys()].join(', ');
      problems.push(
        `${at}: unknown preset ${JSON.stringify(name)}${guess ? ` (did you mean "${guess}"?)` : ''}; known: ${known}`,
      );
      return [];
    }
    const own = Object.keys(preset.options?.properties ?? {});
    const allowed = [...COMMON_KEYS, 'allowUnsafeExternalContent', ...own];
    for (const key of Object.keys(options)) {
      if (allowed.includes(key)) continue;
      const guess = didYouMean(key, allowed);
      problems.push(`${at}.${key}: unknown option of the ${name} preset${guess ? ` (did you mean "${guess}"?)` : ''}`);
    }
    const checked = checkOptions(preset, options, at);
    problems.push(...checked.problems);
    if (preset.verify && options.secret === undefined && options[preset.verify.secretOption] === undefined) {
      problems.push(
        `${at}.secret: required by the ${name} preset (its senders sign with a ${preset.verify.scheme} secret)`,
      );
    }
    return preset.mappings.map((m) => ({
      mapping: applyEntry(preset, m, options, config),
      index,
      root: preset.dir,
      options: checked.values,
    }));
  });
  return { mappings, problems };
}

function applyEntry(
  preset: Preset,
  mapping: MappingConfig,
  options: Readonly<Record<string, unknown>>,
  config: Pick<Config, 'hooks'>,
): MappingConfig {
  const mail = preset.name === 'mail' ? config.hooks.mail : undefined;
  const overrides = Object.fromEntries(OVERRIDES.filter((k) => options[k] !== undefined).map((k) => [k, options[k]]));
  const secret = preset.verify ? (options.secret ?? options[preset.verify.secretOption]) : undefined;
  return {
    ...mapping,
    match: { ...mapping.match, path: (options.path as string | undefined) ?? mapping.match?.path ?? preset.name },
    ...(mail?.model ? { model: mail.model } : {}),
    ...(mail?.thinking ? { thinking: mail.thinking } : {}),
    ...(mail?.allowUnsafeExternalContent === undefined
      ? {}
      : { allowUnsafeExternalContent: mail.allowUnsafeExternalContent }),
    ...overrides,
    ...(preset.verify && typeof secret === 'string' ? { verify: { scheme: preset.verify.scheme, secret } } : {}),
  };
}

const optionValidators = new WeakMap<Preset, ValidateFunction>();
let withDefaults: Ajv | undefined;

/**
 * The preset's own options, checked against its `options` schema and with its defaults filled
 * in (what its transform is given), and `at.key: what is wrong` lines.
 */
function checkOptions(
  preset: Preset,
  options: Readonly<Record<string, unknown>>,
  at: string,
): { values: Record<string, unknown>; problems: string[] } {
  const own = Object.keys(preset.options?.properties ?? {});
  const values = structuredClone(Object.fromEntries(Object.entries(options).filter(([key]) => own.includes(key))));
  if (!preset.options) return { values, problems: [] };
  let validate = optionValidators.get(preset);
  if (!validate) {
    withDefaults ??= new Ajv({ allErrors: true, strict: false, useDefaults: true });
    validate = withDefaults.compile({ ...preset.options, additionalProperties: true });
    optionValidators.set(preset, validate);
  }
  if (validate(values)) return { values, problems: [] };
  const problems = (validate.errors ?? []).map(
    (e) =>
      `${at}${e.instancePath.replace(/\//g, '.')}: ${e.message ?? 'is invalid'} (an option of the ${preset.name} preset)`,
  );
  return { values, problems };
}
