/**
 * The enabled presets (`hooks.presets`): each entry's preset, its options checked, its
 * overrides applied, as mappings to compile (docs/presets.md).
 */

import type { Ajv, ValidateFunction } from 'ajv';
import { type Config, didYouMean, type MappingConfig } from '../config/index.js';
import { secretProblemOf } from '../schemes/index.js';
import { COMMON_KEYS, isSecretOption, OVERRIDES, SECRET_KEY } from './entry-keys.js';
import { type EntryMapping, entryProblems, maxTimeoutSeconds, sessionNamespace } from './plugin-rules.js';
import { availablePresets, type Preset, type PresetFixture } from './presets.js';
import { compileSchema, createSchemaAjv } from './user-schema.js';

type Entry = Config['hooks']['presets'][number];

/** An entry's name and options, whether written as a name or as an object. */
function presetEntry(entry: Entry): { name: string; options: Readonly<Record<string, unknown>> } {
  return typeof entry === 'string' ? { name: entry, options: {} } : { name: entry.name, options: entry };
}

/** The preset a mapping comes from: its name, and its recorded fixtures (for the console's playground). */
export interface PresetSource {
  readonly name: string;
  readonly fixtures: readonly PresetFixture[];
}

/** An enabled preset's mapping, ready to compile. */
export interface PresetMapping {
  readonly mapping: MappingConfig;
  readonly configPath: string;
  readonly root: string;
  /** Its preset's name and recorded fixtures (read when it loaded). */
  readonly preset: PresetSource;
  readonly options: Readonly<Record<string, unknown>>;
  /** A plugin's: the longest run its transform may ask for. */
  readonly maxTimeoutSeconds?: number;
  /** A plugin's: the sessions its runs keep to (`hook:<plugin>`); its transform cannot change where replies go either. */
  readonly sessionNamespace?: string;
  /** A plugin's: `file:line:col` of a key of its mapping in its manifest (`schema`), for problems found compiling it. */
  readonly place?: (key: string) => string;
}

/**
 * The enabled presets as mappings (`match.path` defaulting to the preset's name, the entry's
 * overrides applied, `hooks.mail` applied to `mail`), each with its place in `hooks.presets`,
 * and the problems of the entries that cannot be used (an unknown preset or option, or a plugin
 * that oversteps: src/mapping/plugin-rules.ts).
 */
export function presetMappings(config: Pick<Config, 'hooks' | 'baseDir' | 'agents'>): {
  mappings: PresetMapping[];
  problems: string[];
} {
  // Reading the presets' folders costs about 70 ms: a config that names none never pays.
  if (config.hooks.presets.length === 0 && config.hooks.plugins.length === 0) return { mappings: [], problems: [] };
  const { presets, problems, broken } = availablePresets(config);
  const entries = config.hooks.presets.flatMap((entry, index) => {
    const { name, options } = presetEntry(entry);
    const preset = presets.get(name);
    if (preset) return enable(preset, options, index, config, problems);
    // A plugin that could not be read is reported already.
    if (broken.has(name)) return [];
    const guess = didYouMean(name, presets.keys());
    const known = [...presets.keys()].join(', ');
    problems.push(
      `hooks.presets[${index}]: unknown preset ${JSON.stringify(name)}${guess ? ` (did you mean "${guess}"?)` : ''}; known: ${known}`,
    );
    return [];
  });
  problems.push(...entryProblems(entries, config));
  const mappings = entries.map((entry) => {
    const most = maxTimeoutSeconds(entry, config);
    return {
      mapping: entry.mapping,
      configPath: entry.configPath,
      root: entry.preset.dir,
      preset: { name: entry.preset.name, fixtures: entry.preset.fixtures },
      options: entry.checked,
      ...(most === undefined ? {} : { maxTimeoutSeconds: most }),
      ...(entry.plugin ? { sessionNamespace: sessionNamespace(entry.plugin.name), place: entry.plugin.place } : {}),
    };
  });
  return { mappings, problems };
}

/** One entry's mappings, its problems pushed onto `problems`. */
function enable(
  preset: Preset,
  options: Readonly<Record<string, unknown>>,
  index: number,
  config: Pick<Config, 'hooks'>,
  problems: string[],
): (EntryMapping & { readonly checked: Readonly<Record<string, unknown>>; readonly preset: Preset })[] {
  const at = `hooks.presets[${index}]`;
  const { name } = preset;
  const allowed = [...COMMON_KEYS, ...Object.keys(preset.options?.properties ?? {})];
  for (const key of Object.keys(options)) {
    if (allowed.includes(key)) continue;
    const guess = didYouMean(key, allowed);
    problems.push(`${at}.${key}: unknown option of the ${name} preset${guess ? ` (did you mean "${guess}"?)` : ''}`);
  }
  const checked = checkOptions(preset, options, at);
  problems.push(...checked.problems);
  if (preset.verify) {
    const { scheme, secretOption } = preset.verify;
    const secret = entrySecret(preset, options);
    if (secret === undefined)
      problems.push(`${at}.secret: required by the ${name} preset (its senders sign with a ${scheme} secret)`);
    else {
      const key = Object.hasOwn(options, SECRET_KEY) ? SECRET_KEY : secretOption;
      const wrong =
        typeof secret !== 'string' || secret === ''
          ? `expected the ${scheme} secret, a string that is not empty`
          : secretProblemOf(scheme, secret);
      if (wrong) problems.push(`${at}.${key}: ${wrong}`);
    }
  }
  return preset.mappings.map((declared, i) => ({
    declared,
    mapping: applyEntry(preset, declared, options, config),
    index,
    configPath: `${at} (${declared.id ?? 'preset'})`,
    options,
    checked: checked.values,
    preset,
    ...(preset.plugin
      ? { plugin: { name, ...preset.plugin, place: (key: string) => preset.place(`mappings[${i}].${key}`) } }
      : {}),
  }));
}

function applyEntry(
  preset: Preset,
  mapping: MappingConfig,
  options: Readonly<Record<string, unknown>>,
  config: Pick<Config, 'hooks'>,
): MappingConfig {
  const mail = preset.name === 'mail' ? config.hooks.mail : undefined;
  const overrides = Object.fromEntries(OVERRIDES.filter((k) => options[k] !== undefined).map((k) => [k, options[k]]));
  const secret = entrySecret(preset, options);
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

/** The secret of an entry for a preset that verifies: its own `secret`, else the option its manifest names (own keys only). */
function entrySecret(preset: Preset, options: Readonly<Record<string, unknown>>): unknown {
  if (!preset.verify) return undefined;
  for (const key of [SECRET_KEY, preset.verify.secretOption])
    if (Object.hasOwn(options, key) && options[key] !== undefined) return options[key];
  return undefined;
}

const optionValidators = new WeakMap<Preset, ValidateFunction>();
/** Made for the first preset with options, not at start. */
let withDefaults: Ajv | undefined;

/**
 * The preset's own options, checked against its `options` schema and with its defaults filled
 * in (what its transform is given: without those marked `secret: true`), and `at.key: what is
 * wrong` lines.
 */
function checkOptions(
  preset: Preset,
  options: Readonly<Record<string, unknown>>,
  at: string,
): { values: Record<string, unknown>; problems: string[] } {
  // Without a prototype: an option named `constructor` or `toString` is never the one every object inherits.
  const values: Record<string, unknown> = Object.create(null);
  for (const key of Object.keys(preset.options?.properties ?? {}))
    if (Object.hasOwn(options, key)) values[key] = structuredClone(options[key]);
  if (!preset.options) return { values, problems: [] };
  let validate = optionValidators.get(preset);
  if (!validate) {
    try {
      withDefaults ??= createSchemaAjv({ allErrors: true, useDefaults: true });
      validate = compileSchema(withDefaults, { ...preset.options, additionalProperties: true });
    } catch {
      // Its manifest's problem, reported with the plugin already.
      return { values, problems: [] };
    }
    optionValidators.set(preset, validate);
  }
  const problems = validate(values)
    ? []
    : (validate.errors ?? []).map(
        (e) =>
          `${at}${e.instancePath.replace(/\//g, '.')}: ${e.message ?? 'is invalid'} (an option of the ${preset.name} preset)`,
      );
  // A secret is the signature check's alone: its transform is never given it, whether the
  // manifest marks it `secret: true` or names it as an option of its own (`secret`, the
  // entry's key, or its `verify.secretOption`).
  const properties = preset.options.properties ?? {};
  for (const key of Object.keys(values))
    if (isSecretOption(properties[key]) || key === SECRET_KEY || key === preset.verify?.secretOption)
      delete values[key];
  return { values, problems };
}
