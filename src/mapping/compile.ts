import { LAST_CHANNEL } from '../action-shape.js';
import { expectedChannel, type ModelCatalog } from '../actions/index.js';
import { type Config, configInvalid, type MappingConfig } from '../config/index.js';
import { isHookdError } from '../errors.js';
import type { RenderBudget } from './bounded-text.js';
import type { EventTypeRule } from './event-type.js';
import { compileTemplates, draftRenderer, schemaWarnings } from './mapping-templates.js';
import { everyProblem, payloadChecker, readSchema, type SchemaProblem } from './payload-schema.js';
import { type PresetSource, presetMappings } from './preset-entries.js';
import { staticFieldProblems } from './static-fields.js';
import type { TemplateView } from './templates.js';
import type { Draft, MappingPolicy } from './types.js';

/** A mapping ready to serve: templates compiled, match normalised. */
export interface CompiledMapping {
  /**
   * Its key everywhere (transform host, run concurrency, signatures, metrics): `id`, else the
   * config path (`hooks.mappings[2]`). Computed here and nowhere else.
   */
  readonly id: string;
  /** Where it came from, for error messages. */
  readonly configPath: string;
  readonly matchPath?: string;
  readonly matchSource?: string;
  /** `match.headers`: lower-cased names, each with its allowed values. */
  readonly matchHeaders?: readonly (readonly [name: string, values: ReadonlySet<string>])[];
  /** A preset's mapping: the options of its `hooks.presets` entry, for its transform. */
  readonly presetOptions?: Readonly<Record<string, unknown>>;
  /** A preset's mapping: its preset's name and recorded fixtures. */
  readonly preset?: PresetSource;
  /** `path: message` lines for what compiles but will not do what it says (a name the schema lacks). */
  readonly warnings: readonly string[];
  /** The payload's problem against the mapping's `schema` (a JSON pointer and what is wrong), if any. */
  readonly checkPayload?: (payload: unknown) => SchemaProblem | undefined;
  /**
   * Every problem of the payload against the schema, not only the first that a live request
   * answers with (`hookd test`'s report); its validator is compiled on first use.
   */
  readonly payloadProblems?: (payload: unknown) => readonly SchemaProblem[];
  readonly forEach?: string;
  readonly maxBodyBytes?: number;
  /** Runs of this mapping executing at once, at most. */
  readonly maxConcurrent?: number;
  /** A plugin's mapping: the longest run its transform may ask for (the operator's limit). */
  readonly maxTimeoutSeconds?: number;
  /**
   * A plugin's mapping: its sessions (`hook:<plugin>`), which its runs keep to, and its
   * transform cannot change `to` or `channel` (the operator's entry sets them).
   */
  readonly sessionNamespace?: string;
  /** `root`: the folder the module is contained in, for a preset's transform (default `hooks.transformsDir`). */
  readonly transform?: { readonly module: string; readonly export?: string; readonly root?: string };
  /** Signature verification (docs/security.md#provider-signatures): a valid signature replaces the token for this mapping. */
  readonly verify?: NonNullable<MappingConfig['verify']>;
  /** How its requests' event type is read (docs/mappings.md#event-types); its transform may return one too. */
  readonly eventType?: EventTypeRule;
  readonly policy: MappingPolicy;
  /** The names each template field reads at its top level (`try` names those a payload lacks). */
  readonly templateNames: readonly { readonly field: string; readonly names: readonly string[] }[];
  /** False when no field is a template (a transform-only mapping needs no view). */
  readonly usesView: boolean;
  /** Renders the templated draft for one view, within the request's budget of template steps. */
  draft(view: TemplateView, budget?: RenderBudget): Draft;
}

/** A preset's or plugin's mapping: where it comes from and what its entry sets. */
export interface MappingPreset {
  readonly root: string;
  readonly preset?: PresetSource;
  readonly options: Readonly<Record<string, unknown>>;
  readonly maxTimeoutSeconds?: number;
  readonly sessionNamespace?: string;
  readonly place?: (key: string) => string;
}

/** Compiles one mapping; throws CONFIG_INVALID with a `path: problem` line for each problem. */
export function compileMapping(
  mapping: MappingConfig,
  configPath: string,
  models: ModelCatalog,
  /** The config's folder, and the operator's `hooks.maxBodyBytes` (what a payload can be without the mapping's own). */
  context: { readonly baseDir: string; readonly maxBodyBytes: number },
  preset?: MappingPreset,
): CompiledMapping {
  const transformRoot = preset?.root;
  const problems: string[] = [];
  const { schema, ...schemaChecks } = payloadSchemaOf(mapping, context, (problem) => {
    // A plugin's schema is placed in its manifest, where its author fixes it.
    const at = preset?.place ? `${preset.place('schema')}: ` : '';
    problems.push(`${configPath}.schema: ${at}${problem}`);
  });
  const templates = compileTemplates(mapping, configPath, problems);
  problems.push(...modelProblems(mapping, configPath, models));
  if (!mapping.transform && !mapping.textTemplate && !mapping.messageTemplate) {
    problems.push(`${configPath}: expected messageTemplate, textTemplate or a transform`);
  }
  if (problems.length > 0) throw configInvalid(problems);

  return {
    id: mapping.id ?? configPath,
    configPath,
    ...matchOf(mapping),
    ...schemaChecks,
    ...(preset ? presetPartsOf(preset) : {}),
    ...(mapping.forEach === undefined ? {} : { forEach: mapping.forEach }),
    ...(mapping.maxBodyBytes === undefined ? {} : { maxBodyBytes: mapping.maxBodyBytes }),
    ...(mapping.maxConcurrent === undefined ? {} : { maxConcurrent: mapping.maxConcurrent }),
    ...(mapping.transform
      ? { transform: { ...mapping.transform, ...(transformRoot ? { root: transformRoot } : {}) } }
      : {}),
    ...(mapping.verify ? { verify: mapping.verify } : {}),
    ...(mapping.eventType ? { eventType: mapping.eventType } : {}),
    usesView: templates.size > 0,
    warnings: schema ? schemaWarnings(schema, templates, configPath) : [],
    templateNames: [...templates].map(([entry, template]) => ({ field: entry.template, names: template.names })),
    policy: {
      ...(mapping.wakeMode ? { wakeMode: mapping.wakeMode } : {}),
      allowUnsafeExternalContent: mapping.allowUnsafeExternalContent ?? false,
      contentSource: mapping.contentSource ?? 'webhook',
    },
    draft: draftRenderer(mapping, templates),
  };
}

/** A literal `model` the allowlist refuses, as a problem line (a templated one is checked per request). */
function modelProblems(mapping: MappingConfig, configPath: string, models: ModelCatalog): string[] {
  if (mapping.model === undefined || mapping.model.includes('{{')) return [];
  try {
    models.resolve(mapping.model);
    return [];
  } catch (err) {
    return [`${configPath}.model: ${isHookdError(err) ? err.message : String(err)}`];
  }
}

/** `match` normalised: the path with its slashes trimmed, header names lower-cased with their `|` alternatives. */
export function matchOf(mapping: MappingConfig): Pick<CompiledMapping, 'matchPath' | 'matchSource' | 'matchHeaders'> {
  const trimmedPath = mapping.match?.path?.replace(/^\/+|\/+$/g, '');
  return {
    ...(trimmedPath === undefined ? {} : { matchPath: trimmedPath }),
    ...(mapping.match?.source === undefined ? {} : { matchSource: mapping.match.source }),
    ...(mapping.match?.headers === undefined
      ? {}
      : {
          matchHeaders: Object.entries(mapping.match.headers).map(
            ([name, values]) => [name.toLowerCase(), new Set(values.split('|').map((v) => v.trim()))] as const,
          ),
        }),
  };
}

/** What a preset's or plugin's entry adds to its mapping. */
function presetPartsOf(
  preset: MappingPreset,
): Pick<CompiledMapping, 'presetOptions' | 'preset' | 'maxTimeoutSeconds' | 'sessionNamespace'> {
  return {
    presetOptions: preset.options,
    ...(preset.preset ? { preset: preset.preset } : {}),
    ...(preset.maxTimeoutSeconds === undefined ? {} : { maxTimeoutSeconds: preset.maxTimeoutSeconds }),
    ...(preset.sessionNamespace ? { sessionNamespace: preset.sessionNamespace } : {}),
  };
}

/** A mapping's payload schema and its check, or its problem said to `problem`. */
function payloadSchemaOf(
  mapping: MappingConfig,
  context: { readonly baseDir: string; readonly maxBodyBytes: number },
  problem: (text: string) => void,
): { schema?: object } & Pick<CompiledMapping, 'checkPayload' | 'payloadProblems'> {
  if (mapping.schema === undefined) return {};
  try {
    const schema = readSchema(mapping.schema, context.baseDir);
    const maxBodyBytes = mapping.maxBodyBytes ?? context.maxBodyBytes;
    return { schema, checkPayload: payloadChecker(schema, maxBodyBytes), payloadProblems: everyProblem(schema) };
  } catch (err) {
    problem((err as Error).message);
    return {};
  }
}

/**
 * Compiles `hooks.mappings`, then the enabled presets, in the order they are matched; throws
 * CONFIG_INVALID naming every broken one.
 */
export function compileMappings(
  config: Pick<Config, 'hooks' | 'file' | 'baseDir' | 'agents'>,
  models: ModelCatalog,
): readonly CompiledMapping[] {
  const { compiled, problems } = collectMappings(config, models);
  if (problems.length > 0) throw configInvalid(problems, config.file);
  return compiled;
}

/** Like `compileMappings`, but returns the broken mappings' problems beside the ones that compiled. */
export function collectMappings(
  config: Pick<Config, 'hooks' | 'file' | 'baseDir' | 'agents'> & Partial<Pick<Config, 'channels'>>,
  models: ModelCatalog,
): { readonly compiled: readonly CompiledMapping[]; readonly problems: readonly string[] } {
  const presets = presetMappings(config);
  const sources = [
    ...config.hooks.mappings.map((m, i) => ({ mapping: m, path: `hooks.mappings[${i}]`, preset: undefined })),
    ...presets.mappings.map(({ mapping, configPath, ...preset }) => ({ mapping, path: configPath, preset })),
  ];
  const problems: string[] = [...presets.problems];
  const compiled: CompiledMapping[] = [];
  const channels = new Set(Object.keys(config.channels ?? {}));
  for (const { mapping, path, preset } of sources) {
    const channel = mapping.channel;
    // A templated channel is checked per request, like the agent body's (docs/channels.md).
    if (channel !== undefined && !channel.includes('{{') && channel !== LAST_CHANNEL && !channels.has(channel))
      problems.push(`${path}.channel: expected ${expectedChannel(channels)}, got ${JSON.stringify(channel)}`);
    // One problem a field: a plugin's sessionKey may already be refused (outside hook:<plugin>:).
    const fieldOf = (problem: string) => problem.slice(0, problem.indexOf(':', path.length));
    const said = new Set(problems.filter((p) => p.startsWith(`${path}.`)).map(fieldOf));
    const fixed = staticFieldProblems(mapping, path, config.hooks.allowedSessionKeyPrefixes);
    problems.push(...fixed.filter((p) => !said.has(fieldOf(p))));
    try {
      const context = { baseDir: config.baseDir, maxBodyBytes: config.hooks.maxBodyBytes };
      compiled.push(compileMapping(mapping, path, models, context, preset));
    } catch (err) {
      if (!isHookdError(err, 'CONFIG_INVALID')) throw err;
      problems.push(...err.params.problems);
    }
  }
  return { compiled, problems };
}
