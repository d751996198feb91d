import type { Ajv, ValidateFunction } from 'ajv';
import JSON5 from 'json5';
import {
  formatSchemaErrors,
  keyPositions,
  locate,
  type MappingConfig,
  mappingSchema,
  type Position,
} from '../config/index.js';
import { isHookdError } from '../errors.js';
import { secretOptionProblem } from './entry-keys.js';
import { schemaOfText } from './payload-schema.js';
import type { PresetFolder } from './preset-folder.js';
import { compileSchema, createSchemaAjv } from './user-schema.js';

/**
 * The most a preset's manifest, schema file or README may hold, checked before it is parsed
 * (a 20 MB manifest took 7 s and 1.18 GB to parse).
 */
export const MAX_PRESET_FILE_BYTES = 1024 * 1024;

/** What a `preset.json5` declares (docs/presets.md#the-format). */
export interface Manifest {
  readonly name: string;
  readonly description: string;
  readonly version: string;
  /** A JSON Schema of the preset's own options (the keys of its `hooks.presets` entry). */
  readonly options?: { readonly properties?: Readonly<Record<string, unknown>> };
  /** The signature scheme its senders use, and which key of the entry holds the secret (`secret`, or an option marked `secret: true`). */
  readonly verify?: { readonly scheme: NonNullable<MappingConfig['verify']>['scheme']; readonly secretOption: string };
  /** How its requests' event type is read, for every mapping that declares none of its own. */
  readonly eventType?: MappingConfig['eventType'];
  readonly mappings: readonly MappingConfig[];
}

/**
 * The manifest's schema: its mappings are checked against the very schema of `hooks.mappings`
 * (unknown keys, types, limits' minimums), so that a preset's data is held to the rules of the
 * operator's own config.
 */
const manifestSchema = {
  type: 'object',
  required: ['name', 'description', 'version', 'mappings'],
  additionalProperties: false,
  properties: {
    name: { type: 'string', pattern: '^[a-z0-9][a-z0-9-]*$', description: 'lower-case letters, digits and dashes' },
    description: { type: 'string', minLength: 1 },
    version: { type: 'string', minLength: 1 },
    options: { type: 'object' },
    verify: {
      type: 'object',
      required: ['scheme', 'secretOption'],
      additionalProperties: false,
      properties: {
        scheme: mappingSchema.properties.verify.properties.scheme,
        secretOption: { type: 'string', minLength: 1 },
      },
    },
    eventType: mappingSchema.properties.eventType,
    mappings: { type: 'array', minItems: 1, items: mappingSchema },
  },
} as const;

/** Made when the first preset is read, not at start (a config without presets never makes it). */
let checker: { readonly ajv: Ajv; readonly validate: ValidateFunction } | undefined;
const manifestChecker = () => {
  if (checker) return checker;
  const ajv = createSchemaAjv({ allErrors: true, verbose: true });
  checker = { ajv, validate: ajv.compile(manifestSchema) };
  return checker;
};

/**
 * A manifest read from its folder, and its problems (`file:line:col: key.path: what`). It is
 * there whenever its schema held, problems or not (what it breaks is left out of it), so that
 * the rules of the operator's config still run on it and every problem is said at once.
 */
export interface ManifestRead {
  readonly manifest?: Manifest;
  /** The name it gives itself, when it has one even though its schema failed. */
  readonly name?: string;
  readonly problems: readonly string[];
  /** The manifest file, and where each of its keys stands (to place later problems). */
  readonly file: string;
  readonly positions: ReadonlyMap<string, Position>;
}

/**
 * Reads and checks `preset.json5`: its schema, and what the schema cannot say: a mapping never
 * verifies signatures itself (the scheme is the manifest's, the secret the operator's entry's),
 * ids are unique, every file it names is inside its folder, its `options` schema compiles.
 * A plugin's ids are namespaced `plugin:<name>:<id>` (an index for a mapping without one).
 */
export function readManifest(folder: PresetFolder, plugin: boolean): ManifestRead {
  const found = folder.read('preset.json5', MAX_PRESET_FILE_BYTES);
  const file = 'file' in found ? found.file : `${folder.dir}/preset.json5`;
  const none = { problems: [] as string[], file, positions: new Map<string, Position>() };
  if ('missing' in found) return { ...none, problems: [`${folder.dir} has no preset.json5`] };
  if ('problem' in found) return { ...none, problems: [found.problem] };
  const { text } = found;
  let data: unknown;
  try {
    data = JSON5.parse(text);
  } catch (err) {
    return { ...none, problems: [`${file}: ${(err as Error).message.replace(/^JSON5: /, '')}`] };
  }
  const positions = keyPositions(text);
  // A key the file lacks is placed at its nearest parent there, or at the top.
  const at = (path: string) => {
    const place = locate(positions, path) ?? { line: 1, column: 1 };
    return `${file}:${place.line}:${place.column}: ${path || '(root)'}`;
  };
  const { ajv, validate: validateManifest } = manifestChecker();
  if (!validateManifest(data)) {
    const problems = formatSchemaErrors(validateManifest.errors ?? []).map((line) => {
      const cut = /^[\w$.[\]"-]+: /.exec(line)?.[0];
      return cut ? `${at(cut.slice(0, -2))}: ${line.slice(cut.length)}` : `${at('')}: ${line}`;
    });
    const { name } = (data ?? {}) as { name?: unknown };
    return { problems, file, positions, ...(typeof name === 'string' ? { name } : {}) };
  }
  const manifest = data as unknown as Manifest;
  const problems: string[] = [];
  if (manifest.options) {
    try {
      compileSchema(ajv, { ...manifest.options, additionalProperties: true });
    } catch (err) {
      problems.push(`${at('options')}: ${(err as Error).message}`);
    }
  }
  if (manifest.verify) {
    const wrong = secretOptionProblem(manifest.verify.secretOption, manifest.options?.properties);
    if (wrong) problems.push(`${at('verify.secretOption')}: ${wrong}`);
  }
  const ids = new Set<string>();
  const mappings = manifest.mappings.map(({ verify, schema: declaredSchema, ...mapping }, i) => {
    const key = `mappings[${i}]`;
    if (verify)
      problems.push(
        `${at(`${key}.verify`)}: a preset's mapping does not verify signatures itself: declare verify: { scheme, secretOption } in the manifest; the secret comes from the operator's hooks.presets entry`,
      );
    const id = plugin ? `plugin:${manifest.name}:${mapping.id ?? i}` : mapping.id;
    if (id !== undefined && ids.has(id))
      problems.push(`${at(`${key}.id`)}: expected a unique id; ${JSON.stringify(id)} is used before`);
    if (id !== undefined) ids.add(id);
    const schema = payloadSchema(folder, declaredSchema, (text) => problems.push(`${at(`${key}.schema`)}: ${text}`));
    const eventType = mapping.eventType ?? manifest.eventType;
    return {
      ...mapping,
      ...(id === undefined ? {} : { id }),
      ...(schema === undefined ? {} : { schema }),
      ...(eventType === undefined ? {} : { eventType }),
    };
  });
  return { manifest: { ...manifest, mappings }, problems, file, positions };
}

/**
 * A mapping's payload schema: an object as it is; a file named inside the folder, read now
 * (a regular file of at most MAX_PRESET_FILE_BYTES); none, the folder's `schema.ts` or
 * `schema.json` when there is one.
 */
function payloadSchema(
  folder: PresetFolder,
  schema: MappingConfig['schema'],
  problem: (text: string) => void,
): MappingConfig['schema'] {
  if (schema !== undefined && typeof schema !== 'string') return schema;
  for (const name of schema === undefined ? ['schema.ts', 'schema.json'] : [schema]) {
    const found = folder.read(name, MAX_PRESET_FILE_BYTES);
    if ('problem' in found) {
      problem(found.problem);
      return undefined;
    }
    if ('missing' in found) {
      if (schema !== undefined) problem(`no such file in the preset's folder: ${name}`);
      continue;
    }
    try {
      return schemaOfText(found.text, name) as Record<string, unknown>;
    } catch (err) {
      if (!isHookdError(err, 'CONFIG_PROBLEM')) throw err;
      problem(err.message);
      return undefined;
    }
  }
  return undefined;
}
