import { realpathSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import JSON5 from 'json5';
import { hookdError } from '../errors.js';
import { readRegularFile } from '../read-file.js';
import { secretProblemOf } from '../schemes/index.js';
import { settleAlerts } from './alerts.js';
import { parseDurationMs } from './duration.js';
import { expandEnv, joinPath, pathsMeet, type UnsetVariable } from './env.js';
import { withoutRefused } from './salvage.js';
import { TIMER_MAX_MS } from './schema.js';
import { formatSchemaErrors } from './schema-errors.js';
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
  const report = inspectConfig(options);
  if (report.problems.length > 0 || !report.config) throw configInvalid(report.problems, report.file);
  return report.config;
}

/** What `inspectConfig` found: every problem at once, and the config as far as it could be built. */
export interface ConfigReport {
  /** Built (defaults applied, paths resolved) unless the file could not be read or parsed. */
  readonly config?: Config;
  /** `path: what is wrong` lines: syntax, environment, schema and cross-key problems together. */
  readonly problems: readonly string[];
  readonly file?: string;
  /** The file's text, for locating problems in it. */
  readonly text?: string;
  /** The `${NAME}`s whose variable is not set (each is one of `problems` too). */
  readonly unset?: readonly UnsetVariable[];
}

/**
 * Reads, expands and validates a configuration, collecting every problem instead of stopping
 * at the first kind (`hookd check` reports them in one pass). The config is still built when
 * there are problems, for the later checks (mappings, transforms) to run on what is valid.
 */
export function inspectConfig(options: LoadConfigOptions = {}): ConfigReport {
  const env = options.env ?? process.env;
  const file = options.file === undefined ? undefined : resolve(options.file);
  const named = file === undefined ? {} : { file };
  let raw: unknown = options.data ?? {};
  let text: string | undefined;
  if (file !== undefined) {
    const read = readConfigFile(file);
    if ('problem' in read) return { problems: [read.problem], ...named, ...(read.text ? { text: read.text } : {}) };
    ({ raw, text } = read);
  }
  const baseDir = file === undefined ? resolve(options.baseDir ?? process.cwd()) : dirname(file);
  const withText = { ...named, ...(text === undefined ? {} : { text }) };

  const unset: UnsetVariable[] = [];
  const expanded = expandEnv(raw, env, '', unset);
  const problems = unset.map((u) => u.problem);
  // The keys whose value is not the file's: a variable that is not set, or refused by the schema.
  const refused = unset.map((u) => u.path);
  let config = expanded as RawConfig;
  if (!validate(expanded)) {
    const errors = validate.errors ?? [];
    // A variable that is not set already explains why its value is then invalid.
    const schema = formatSchemaErrors(errors).filter((p) => !unset.some((u) => p.startsWith(`${u.path}: `)));
    problems.push(...schema);
    refused.push(...schema.map(pathOf));
    // The later checks run in the same pass, on what the schema accepted (defaults in place of the rest).
    config = withoutRefused(expanded, errors, validate) as RawConfig;
  }
  const semantic: string[] = [];
  try {
    checkSemantics(config, semantic, refused);
    config.hooks.path = normalizeHooksPath(config.hooks.path);
    config.storage.path = resolveFrom(baseDir, config.storage.path);
    config.hooks.transformsDir = resolveFrom(baseDir, config.hooks.transformsDir);
  } catch {
    // What the schema could not salvage stops the build here.
    return { problems: [...problems, ...semantic], unset, ...withText };
  }
  // What follows from a refused value (its default in its place) is no problem of its own.
  problems.push(...semantic.filter((p) => !refused.some((path) => pathsMeet(pathOf(p), path))));
  return { config: deepFreeze({ ...config, baseDir, ...named }) as Config, problems, unset, ...withText };
}

/** The key path of a `path: message` problem line. */
function pathOf(problem: string): string {
  const at = problem.indexOf(': ');
  return at === -1 ? '' : problem.slice(0, at);
}

/**
 * `path: message` lines for what is valid but will not do what it says: a mail watcher that
 * cannot start. `serve` logs them; `check` prints them.
 */
export function configWarnings(config: Config): string[] {
  const warnings: string[] = [];
  const { hooks } = config;
  if (hooks.mail?.watch) {
    if (!hooks.enabled) warnings.push('hooks.mail.watch: the mail watcher does not start while hooks.enabled is false');
    else if (!hooks.token) warnings.push('hooks.mail.watch: the mail watcher does not start without hooks.token');
    if (!hooks.presets.some((p) => (typeof p === 'string' ? p : p.name) === 'mail')) {
      warnings.push(
        'hooks.mail.watch: the mail preset is not enabled (add "mail" to hooks.presets): /hooks/mail answers 404',
      );
    }
  }
  return warnings;
}

/** A CONFIG_INVALID error for these problems, naming the file when there is one. */
export function configInvalid(problems: readonly string[], file?: string) {
  return hookdError('CONFIG_INVALID', { problems, ...(file === undefined ? {} : { file }) });
}

/** The most a config file may hold: a FIFO or a 100 MB file in its place must not hold the gateway. */
export const MAX_CONFIG_BYTES = 8 * 1024 * 1024;

function readConfigFile(file: string): { raw: unknown; text: string } | { problem: string; text?: string } {
  let real: string;
  try {
    // A symbolic link is followed (a ConfigMap's `..data`), then only a regular file is read.
    real = realpathSync(file);
  } catch (err) {
    return { problem: `cannot read the config file: ${(err as NodeJS.ErrnoException).code ?? String(err)}` };
  }
  const read = readRegularFile(real, MAX_CONFIG_BYTES);
  if ('problem' in read) return { problem: `cannot read the config file: it ${read.problem}` };
  const { text } = read;
  try {
    return { raw: JSON5.parse(text), text };
  } catch (err) {
    const e = err as { lineNumber?: number; columnNumber?: number; message: string };
    const where = e.lineNumber === undefined ? '' : `${e.lineNumber}:${e.columnNumber ?? 0}: `;
    const reason = e.message.replace(/^JSON5: /, '').replace(/ at \d+:\d+$/, '');
    return { problem: `${where}syntax error: ${reason}${missingComma(text, e.lineNumber, e.columnNumber)}`, text };
  }
}

/**
 * ` (is a comma missing at the end of line N?)` when the unexpected character starts its line
 * and the line before ends a value: the most common JSON5 mistake, which the parser reports
 * only as an invalid character on the next line.
 */
function missingComma(text: string, line: number | undefined, column: number | undefined): string {
  if (line === undefined || column === undefined || line < 2) return '';
  const lines = text.split('\n');
  const here = lines[line - 1] ?? '';
  if (here.slice(0, column - 1).trim() !== '') return '';
  for (let n = line - 1; n >= 1; n--) {
    const before = (lines[n - 1] ?? '').replace(/\s\/\/.*$/, '').trimEnd();
    if (before === '' || before.trimStart().startsWith('//')) continue;
    return /[,{[]$/.test(before) ? '' : ` (is a comma missing at the end of line ${n}?)`;
  }
  return '';
}

/** The paths hookd answers itself (docs/http.md): hooks cannot live at or under them. */
const OWN_PATHS = ['/healthz', '/metrics', '/ui', '/api', '/favicon.ico'];

function checkSemantics(config: RawConfig, problems: string[], refused: readonly string[]): void {
  const { hooks, gateway } = config;
  if (hooks.enabled && !hooks.token) problems.push('hooks.token: required when hooks.enabled is true');
  // Compared only as the file and the environment give them: two `${NAME}`s not set are not equal.
  const resolved = !refused.includes('hooks.token') && !refused.includes('gateway.auth.token');
  if (resolved && hooks.token !== undefined && hooks.token === gateway.auth.token) {
    problems.push('hooks.token: must differ from gateway.auth.token (use a dedicated hook token)');
  }
  if (normalizeHooksPath(hooks.path) === '/') problems.push('hooks.path: expected a path such as /hooks, not /');
  if (/[?#\s*:]/.test(hooks.path)) problems.push('hooks.path: expected a plain URL path without ?, #, *, : or spaces');
  const hooksPath = normalizeHooksPath(hooks.path);
  const meets = (own: string) =>
    hooksPath === own || hooksPath.startsWith(`${own}/`) || own.startsWith(`${hooksPath}/`);
  const taken = OWN_PATHS.find(meets);
  if (taken) problems.push(`hooks.path: ${taken} is hookd's own (${OWN_PATHS.join(', ')} are)`);
  const every = config.agents.defaults.heartbeat.every;
  if (every !== 0 && every !== '0' && parseDurationMs(every) < 1000) {
    problems.push('agents.defaults.heartbeat.every: expected at least 1s');
  }
  if (parseDurationMs(every) > TIMER_MAX_MS) problems.push('agents.defaults.heartbeat.every: expected at most 24d');
  const { headersTimeoutMs, requestTimeoutMs } = config.server;
  // Node refuses to start a server whose requests end before their headers may.
  if (requestTimeoutMs < headersTimeoutMs)
    problems.push(`server.requestTimeoutMs: expected at least server.headersTimeoutMs (${headersTimeoutMs})`);
  checkModels(config, problems);
  settleAlerts(config, problems);
  const { storage } = config;
  if (storage.kind === 'postgres' && !storage.url)
    problems.push('storage.url: required when storage.kind is postgres (postgres://user:password@host:port/database)');
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
    const { verify } = mapping;
    const wrong = typeof verify?.secret === 'string' && secretProblemOf(verify.scheme, verify.secret);
    if (wrong) problems.push(`hooks.mappings[${i}].verify.secret: ${wrong}`);
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

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const item of Object.values(value)) deepFreeze(item);
  }
  return value;
}
