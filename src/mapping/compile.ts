import { LAST_CHANNEL, TEMPLATED_FIELDS, type TemplatedField } from '../action-shape.js';
import { expectedChannel, type ModelCatalog } from '../actions/index.js';
import { type Config, configInvalid, type MappingConfig } from '../config/index.js';
import { isHookdError } from '../errors.js';
import type { EventTypeRule } from './event-type.js';
import { everyProblem, payloadChecker, readSchema } from './payload-schema.js';
import { type PresetSource, presetMappings } from './preset-entries.js';
import { compileTemplate, type Template, type TemplateView } from './templates.js';
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
  /** Renders the templated draft for one view. */
  draft(view: TemplateView): Draft;
}

/** Compiles one mapping; throws CONFIG_INVALID with a `path: problem` line for each problem. */
export function compileMapping(
  mapping: MappingConfig,
  configPath: string,
  models: ModelCatalog,
  /** The config's folder, and the operator's `hooks.maxBodyBytes` (what a payload can be without the mapping's own). */
  context: { readonly baseDir: string; readonly maxBodyBytes: number },
  preset?: {
    readonly root: string;
    readonly preset?: PresetSource;
    readonly options: Readonly<Record<string, unknown>>;
    readonly maxTimeoutSeconds?: number;
    readonly sessionNamespace?: string;
    readonly place?: (key: string) => string;
  },
): CompiledMapping {
  const transformRoot = preset?.root;
  const problems: string[] = [];
  const { schema, ...schemaChecks } = payloadSchemaOf(mapping, context, (problem) => {
    // A plugin's schema is placed in its manifest, where its author fixes it.
    const at = preset?.place ? `${preset.place('schema')}: ` : '';
    problems.push(`${configPath}.schema: ${at}${problem}`);
  });
  const templates = new Map<TemplatedField, Template>();
  for (const entry of TEMPLATED_FIELDS) {
    const source = mapping[entry.template];
    if (source === undefined) continue;
    try {
      templates.set(entry, compileTemplate(source));
    } catch (err) {
      problems.push(templateProblem(`${configPath}.${entry.template}`, mapping.id, err));
    }
  }
  if (mapping.model !== undefined && !mapping.model.includes('{{')) {
    try {
      models.resolve(mapping.model);
    } catch (err) {
      problems.push(`${configPath}.model: ${isHookdError(err) ? err.message : String(err)}`);
    }
  }
  if (!mapping.transform && !mapping.textTemplate && !mapping.messageTemplate) {
    problems.push(`${configPath}: expected messageTemplate, textTemplate or a transform`);
  }
  if (problems.length > 0) throw configInvalid(problems);

  const action = mapping.action ?? 'agent';
  const trimmedPath = mapping.match?.path?.replace(/^\/+|\/+$/g, '');

  return {
    id: mapping.id ?? configPath,
    configPath,
    ...(trimmedPath === undefined ? {} : { matchPath: trimmedPath }),
    ...(mapping.match?.source === undefined ? {} : { matchSource: mapping.match.source }),
    ...(mapping.match?.headers === undefined
      ? {}
      : {
          matchHeaders: Object.entries(mapping.match.headers).map(
            ([name, values]) => [name.toLowerCase(), new Set(values.split('|').map((v) => v.trim()))] as const,
          ),
        }),
    ...schemaChecks,
    ...(preset ? { presetOptions: preset.options } : {}),
    ...(preset?.preset ? { preset: preset.preset } : {}),
    ...(preset?.maxTimeoutSeconds === undefined ? {} : { maxTimeoutSeconds: preset.maxTimeoutSeconds }),
    ...(preset?.sessionNamespace ? { sessionNamespace: preset.sessionNamespace } : {}),
    ...(mapping.forEach === undefined ? {} : { forEach: mapping.forEach }),
    ...(mapping.maxBodyBytes === undefined ? {} : { maxBodyBytes: mapping.maxBodyBytes }),
    ...(mapping.maxConcurrent === undefined ? {} : { maxConcurrent: mapping.maxConcurrent }),
    ...(mapping.transform
      ? { transform: { ...mapping.transform, ...(transformRoot ? { root: transformRoot } : {}) } }
      : {}),
    ...(mapping.verify ? { verify: mapping.verify } : {}),
    ...(mapping.eventType ? { eventType: mapping.eventType } : {}),
    usesView: templates.size > 0,
    warnings: schema
      ? [...templates].flatMap(([entry, template]) =>
          template.names
            .filter((name) => undeclared(schema, name))
            .map(
              (name) =>
                `${configPath}.${entry.template}: {{${name}}} is not in the mapping's schema (it would render empty)`,
            ),
        )
      : [],
    templateNames: [...templates].map(([entry, template]) => ({ field: entry.template, names: template.names })),
    policy: {
      ...(mapping.wakeMode ? { wakeMode: mapping.wakeMode } : {}),
      allowUnsafeExternalContent: mapping.allowUnsafeExternalContent ?? false,
      contentSource: mapping.contentSource ?? 'webhook',
    },
    draft(view) {
      const draft: Draft = { kind: action };
      // A template that renders only white space leaves its field unset.
      for (const [{ field }, template] of templates) {
        const rendered = template(view);
        if (rendered.trim() !== '') draft[field] = rendered;
      }
      if (mapping.deliver !== undefined) draft.deliver = mapping.deliver;
      if (mapping.timeoutSeconds !== undefined) draft.timeoutSeconds = mapping.timeoutSeconds;
      return draft;
    },
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

/** The view's own names: what a template reads there is not the payload. */
const OWN = new Set(['headers', 'query', 'path', 'now']);

/**
 * True when `name` cannot be in a payload the schema accepts: on its way down, a level that
 * declares `properties` lacks the key. A level that declares none (or combines schemas) could
 * hold anything, and is given the benefit of the doubt.
 */
function undeclared(schema: object, name: string): boolean {
  const parts = name.replace(/\[(\d+)\]/g, '.$1').split('.');
  if (OWN.has(parts[0] as string)) return false;
  if (parts[0] === 'payload') parts.shift();
  let node = schema as { properties?: Record<string, object>; items?: object };
  for (const part of parts) {
    if (/^\d+$/.test(part) && node.items) node = node.items as typeof node;
    else if (node.properties) {
      if (!Object.hasOwn(node.properties, part)) return true;
      node = node.properties[part] as typeof node;
    } else return false;
  }
  return false;
}
/**
 * A template's syntax error, naming its mapping; `at N` in the message is the offset in the
 * template, which the CLI turns into the line and column in the config file.
 */
function templateProblem(path: string, mappingId: string | undefined, err: unknown): string {
  const named = mappingId === undefined ? '' : ` (mapping ${mappingId})`;
  return `${path}: template error${named}: ${(err as Error).message}`;
}

/** A payload's problem against a mapping's schema: the JSON pointer of the value, and what is wrong with it. */
export interface SchemaProblem {
  readonly pointer: string;
  readonly problem: string;
}
