import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import type { ErrorObject } from 'ajv';
import JSON5 from 'json5';
import { hookdError } from '../errors.js';
import { parseDurationMs } from './duration.js';
import { expandEnv, joinPath } from './env.js';
import type { Config, RawConfig } from './types.js';
import { validateConfig as validate } from './validator.js';

export interface LoadConfigOptions {
  /** The config file; without one, `data` (or `{}`) is the config. */
  file?: string;
  /** A config object to use instead of reading a file (the embedded default, tests). */
  data?: unknown;
  /** The folder relative paths resolve against when there is no file (default: cwd). */
  baseDir?: string;
  env?: NodeJS.ProcessEnv;
}

/** Reads, expands, validates and freezes a configuration; throws CONFIG_INVALID naming every problem. */
export function loadConfig(options: LoadConfigOptions = {}): Config {
  const env = options.env ?? process.env;
  const file = options.file === undefined ? undefined : resolve(options.file);
  const raw = file === undefined ? (options.data ?? {}) : readConfigFile(file);
  const baseDir = file === undefined ? resolve(options.baseDir ?? process.cwd()) : dirname(file);

  const problems: string[] = [];
  const expanded = expandEnv(raw, env, '', problems);
  if (problems.length > 0) throw configInvalid(problems, file);
  if (!validate(expanded)) throw configInvalid(formatSchemaErrors(validate.errors ?? []), file);

  const config = expanded as RawConfig;
  checkSemantics(config, problems);
  if (problems.length > 0) throw configInvalid(problems, file);

  config.hooks.path = normalizeHooksPath(config.hooks.path);
  config.storage.path = resolveFrom(baseDir, config.storage.path);
  config.hooks.transformsDir = resolveFrom(baseDir, config.hooks.transformsDir);
  return deepFreeze({ ...config, baseDir, ...(file === undefined ? {} : { file }) }) as Config;
}

/** A CONFIG_INVALID error for these problems, naming the file when there is one. */
export function configInvalid(problems: readonly string[], file?: string) {
  return hookdError('CONFIG_INVALID', { problems, ...(file === undefined ? {} : { file }) });
}

function readConfigFile(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw configInvalid([`cannot read the config file: ${(err as NodeJS.ErrnoException).code ?? String(err)}`], file);
  }
  try {
    return JSON5.parse(text);
  } catch (err) {
    const e = err as { lineNumber?: number; columnNumber?: number; message: string };
    const where = e.lineNumber === undefined ? '' : `${e.lineNumber}:${e.columnNumber ?? 0}: `;
    const reason = e.message.replace(/^JSON5: /, '').replace(/ at \d+:\d+$/, '');
    throw configInvalid([`${where}syntax error: ${reason}`], file);
  }
}

function checkSemantics(config: RawConfig, problems: string[]): void {
  const { hooks, gateway } = config;
  if (hooks.enabled && !hooks.token) problems.push('hooks.token: required when hooks.enabled is true');
  if (hooks.token !== undefined && hooks.token === gateway.auth.token) {
    problems.push('hooks.token: must differ from gateway.auth.token (use a dedicated hook token)');
  }
  if (normalizeHooksPath(hooks.path) === '/') problems.push('hooks.path: expected a path such as /hooks, not /');
  if (/[?#\s*:]/.test(hooks.path)) problems.push('hooks.path: expected a plain URL path without ?, #, *, : or spaces');
  const every = config.agents.defaults.heartbeat.every;
  if (every !== 0 && every !== '0' && parseDurationMs(every) < 1000) {
    problems.push('agents.defaults.heartbeat.every: expected at least 1s');
  }
  checkModels(config, problems);
  const ids = new Set<string>();
  hooks.mappings.forEach((mapping, i) => {
    if (mapping.id !== undefined) {
      if (ids.has(mapping.id))
        problems.push(`hooks.mappings[${i}].id: expected a unique id; ${JSON.stringify(mapping.id)} is used before`);
      ids.add(mapping.id);
    }
    if (mapping.match?.path !== undefined && /^\/*(wake|agent)\/*$/.test(mapping.match.path)) {
      problems.push(`hooks.mappings[${i}].match.path: wake and agent are built-in endpoints and cannot be mapped`);
    }
  });
}

function checkModels(config: RawConfig, problems: string[]): void {
  const providers = new Set(['builtin', ...Object.keys(config.models.providers)]);
  const checkRef = (ref: string, path: string) => {
    const provider = ref.slice(0, ref.indexOf('/'));
    if (!providers.has(provider)) problems.push(`${path}: unknown model provider ${JSON.stringify(provider)}`);
  };
  checkRef(config.agents.defaults.model, 'agents.defaults.model');
  const models = config.agents.defaults.models;
  const refs = Array.isArray(models)
    ? models.map((ref, i) => [ref, `agents.defaults.models[${i}]`] as const)
    : Object.keys(models ?? {}).map((ref) => [ref, joinPath('agents.defaults.models', ref)] as const);
  for (const [ref, path] of refs) checkRef(ref, path);
  if (config.hooks.mail?.model) checkRef(config.hooks.mail.model, 'hooks.mail.model');
}

/** `hooks` → `/hooks`, `/hooks/` → `/hooks`, repeated slashes folded. */
export function normalizeHooksPath(path: string): string {
  const trimmed = path.trim().replace(/\/+/g, '/').replace(/\/+$/, '');
  return trimmed.startsWith('/') ? trimmed || '/' : `/${trimmed}`;
}

function resolveFrom(baseDir: string, path: string): string {
  return isAbsolute(path) ? path : resolve(baseDir, path);
}

function pointerToPath(pointer: string): string {
  if (!pointer) return '';
  return pointer
    .slice(1)
    .split('/')
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((path, key) => joinPath(path, key), '');
}

/** Turns ajv errors into `path: expected …` lines, one per problem. */
export function formatSchemaErrors(errors: readonly ErrorObject[]): string[] {
  return [...new Set(selectErrors(errors).map(describeError))];
}

/** The index of the `anyOf` branch an error belongs to. */
function branchOf(e: ErrorObject, owner: ErrorObject): number {
  return Number(e.schemaPath.slice(owner.schemaPath.length + 1).split('/')[0]);
}

/** The one `anyOf` branch whose type fits the value, when exactly one does. */
function fittingBranch(owner: ErrorObject, errors: readonly ErrorObject[]): number | undefined {
  const inside = errors.filter((b) => b !== owner && b.schemaPath.startsWith(`${owner.schemaPath}/`));
  const misfits = new Set(
    inside.filter((b) => b.keyword === 'type' && b.instancePath === owner.instancePath).map((b) => branchOf(b, owner)),
  );
  const fits = [...new Set(inside.map((b) => branchOf(b, owner)))].filter((i) => !misfits.has(i));
  return fits.length === 1 ? fits[0] : undefined;
}

/**
 * A failed `anyOf` is one summary line, unless exactly one branch has the value's type:
 * then that branch's own errors are the precise ones.
 */
function selectErrors(errors: readonly ErrorObject[]): ErrorObject[] {
  const anyOf = errors.filter((e) => e.keyword === 'anyOf');
  const ownerOf = (e: ErrorObject) => anyOf.find((a) => a !== e && e.schemaPath.startsWith(`${a.schemaPath}/`));
  return errors.filter((e) => {
    const owner = ownerOf(e);
    if (owner) return fittingBranch(owner, errors) === branchOf(e, owner);
    return e.keyword !== 'anyOf' || fittingBranch(e, errors) === undefined;
  });
}

function describeError(e: ErrorObject): string {
  const path = pointerToPath(e.instancePath);
  const at = (suffix: string) => `${path ? `${path}: ` : ''}${suffix}`;
  const described = (e.parentSchema as { description?: string } | undefined)?.description;
  const params = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'additionalProperties':
      return `${joinPath(path, String(params.additionalProperty))}: unknown key`;
    case 'required':
      return `${joinPath(path, String(params.missingProperty))}: required`;
    case 'type':
      return at(`expected ${described ?? String(params.type)}, got ${typeName(e.data)}`);
    case 'enum':
      return at(`expected one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`);
    case 'pattern':
    case 'anyOf':
    case 'const':
      return at(`expected ${described ?? `a value that ${e.message ?? 'is valid'}`}, got ${JSON.stringify(e.data)}`);
    case 'propertyNames':
      return at(`has an invalid key: expected ${described ?? 'a valid name'}`);
    default:
      return at(
        described && e.keyword === 'minLength'
          ? `expected ${described}`
          : `expected a value that ${e.message ?? 'is valid'}`,
      );
  }
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const item of Object.values(value)) deepFreeze(item);
  }
  return value;
}
