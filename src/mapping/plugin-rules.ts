import type { Config, MappingConfig } from '../config/index.js';

/**
 * What a plugin may not do to the operator's config (docs/presets.md#what-a-plugin-can-and-cannot-do),
 * checked once the enabled presets are mappings: each rule a config error naming the entry, the
 * plugin and the key, so that `check` and `serve` stop instead of the plugin's data winning.
 */

/** One enabled preset mapping, as the rules see it. */
export interface EntryMapping {
  /** The mapping as its preset declares it (before the entry's overrides). */
  readonly declared: MappingConfig;
  /** The mapping as it will run. */
  readonly mapping: MappingConfig;
  /** Its place in `hooks.presets`, and the one it is shown under (`hooks.presets[1] (plugin:acme:0)`). */
  readonly index: number;
  readonly configPath: string;
  /** The entry's own keys. */
  readonly options: Readonly<Record<string, unknown>>;
  /** Set for a plugin's mapping: its name, what the operator's `hooks.plugins` entry grants, and where it declared each key. */
  readonly plugin?: {
    readonly name: string;
    readonly allowUnsafeExternalContent: boolean;
    readonly place: (key: string) => string;
  };
}

type RuleConfig = Pick<Config, 'hooks' | 'agents'>;

/** The limits a mapping can set, each with the operator's own. */
function limits(config: RuleConfig) {
  const { defaults } = config.agents;
  return [
    ['maxBodyBytes', 'hooks.maxBodyBytes', config.hooks.maxBodyBytes],
    ['timeoutSeconds', 'agents.defaults.timeoutSeconds', defaults.timeoutSeconds],
    ['maxConcurrent', 'agents.defaults.maxConcurrentRuns', defaults.maxConcurrentRuns],
  ] as const;
}

const trim = (path: string | undefined) => path?.replace(/^\/+|\/+$/g, '');

/** The sessions a plugin's runs may use (docs/presets.md#what-a-plugin-can-and-cannot-do): `hook:<name>` and under it. */
export const sessionNamespace = (plugin: string) => `hook:${plugin}`;

/** True when a session key is `hook:<plugin>` or starts with `hook:<plugin>:` (in any case, as prefixes are compared). */
export function inNamespace(key: string, namespace: string): boolean {
  const lower = key.toLowerCase();
  return lower === namespace || lower.startsWith(`${namespace}:`);
}

/**
 * True when a plugin's `sessionKey` template can only render keys of its own: its text before
 * the first tag (which renders as written) is `hook:<name>`, or starts with `hook:<name>:`
 * (`hook:acme:{{id}}`); a template that starts with a tag could render anything.
 */
function staysInNamespace(template: string, plugin: string): boolean {
  const namespace = sessionNamespace(plugin);
  const tag = template.indexOf('{{');
  const literal = tag === -1 ? template : template.slice(0, tag);
  return tag === -1 ? inNamespace(literal, namespace) : literal.toLowerCase().startsWith(`${namespace}:`);
}

/** A plugin's own mapping: no limit above the operator's, no unwrapped content without the operator's say. */
function ownProblems(entry: EntryMapping, config: RuleConfig): string[] {
  const { declared, options, plugin, configPath } = entry;
  if (!plugin) return [];
  const problems: string[] = [];
  for (const [key, theirs, limit] of limits(config)) {
    const value = declared[key];
    if (value === undefined || options[key] !== undefined || value <= limit) continue;
    problems.push(
      `${configPath}.${key}: ${plugin.place(key)}: the ${plugin.name} plugin sets ${key} to ${value}, above ${theirs} (${limit}); a plugin cannot raise your limits (to allow it, set ${key} in this hooks.presets entry)`,
    );
  }
  for (const key of ['to', 'channel'] as const) {
    const value = declared[key];
    if (value === undefined || (key === 'channel' && value === 'last') || options[key] !== undefined) continue;
    problems.push(
      `${configPath}.${key}: ${plugin.place(key)}: the ${plugin.name} plugin sends replies to ${JSON.stringify(value)}; only you choose where replies go (set ${key} in this hooks.presets entry)`,
    );
  }
  const sessionKey = declared.sessionKey;
  if (sessionKey !== undefined && options.sessionKey === undefined && !staysInNamespace(sessionKey, plugin.name)) {
    const namespace = sessionNamespace(plugin.name);
    problems.push(
      `${configPath}.sessionKey: ${plugin.place('sessionKey')}: the ${plugin.name} plugin names the sessions ${JSON.stringify(sessionKey)}; a plugin's sessions are ${namespace}:…, so that it cannot write into another's (start it with "${namespace}:", or set sessionKey in this hooks.presets entry)`,
    );
  }
  if (declared.allowUnsafeExternalContent && options.allowUnsafeExternalContent === undefined) {
    if (!plugin.allowUnsafeExternalContent)
      problems.push(
        `${configPath}.allowUnsafeExternalContent: ${plugin.place('allowUnsafeExternalContent')}: the ${plugin.name} plugin turns the safety wrapper off; only you can (allowUnsafeExternalContent: true in its hooks.plugins entry)`,
      );
  }
  return problems;
}

/**
 * The conflicts between the enabled presets and the operator's mappings: an id that is an
 * operator mapping's, and a plugin mapping on a path that the operator (or another entry) maps,
 * or on a built-in endpoint.
 */
export function entryProblems(entries: readonly EntryMapping[], config: RuleConfig): string[] {
  const problems = entries.flatMap((entry) => ownProblems(entry, config));
  const operator = config.hooks.mappings.map((m, i) => ({ mapping: m, at: `hooks.mappings[${i}]` }));
  const operatorIds = new Map(operator.map(({ mapping, at }) => [mapping.id ?? at, at]));
  for (const entry of entries) {
    const id = entry.mapping.id;
    const owner = id === undefined ? undefined : operatorIds.get(id);
    if (owner) problems.push(`${entry.configPath}.id: ${JSON.stringify(id)} is the id of ${owner}; ids must be unique`);
    if (!entry.plugin) continue;
    const path = trim(entry.mapping.match?.path);
    if (path === 'wake' || path === 'agent') {
      problems.push(`${entry.configPath}.match.path: wake and agent are built-in endpoints and cannot be mapped`);
      continue;
    }
    const others = [
      ...operator.filter((o) => trim(o.mapping.match?.path) === path).map((o) => o.at),
      ...entries
        .filter((e) => e.index !== entry.index && trim(e.mapping.match?.path) === path)
        .map((e) => `hooks.presets[${e.index}]`),
    ];
    for (const other of new Set(others)) {
      problems.push(
        `${entry.configPath}.match.path: the ${entry.plugin.name} plugin maps /${path}, which ${other} maps too; a plugin cannot take a path of yours (give the entry another path)`,
      );
    }
  }
  return problems;
}

/** The longest run a plugin's transform may ask for (`timeoutSeconds` in its result): the operator's. */
export function maxTimeoutSeconds(entry: EntryMapping, config: RuleConfig): number | undefined {
  if (!entry.plugin) return undefined;
  const own = entry.options.timeoutSeconds;
  return typeof own === 'number' ? own : config.agents.defaults.timeoutSeconds;
}
