import { existsSync, realpathSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parseEnv } from 'node:util';
import { type Config, configInvalid, inspectConfig, loadConfig, pathsMeet } from '../config/index.js';
import { readRegularFile } from '../read-file.js';
import { readOrCreateSecret } from '../store/index.js';
import type { CliIo } from './io.js';

/** The config file a command finds in its folder when none is named (what `hookd init` writes). */
export const DEFAULT_CONFIG_FILE = 'hookd.json5';

export interface ResolvedConfig {
  readonly config: Config;
  /** Set for the embedded default: where its hook token is stored, and whether it was just made. */
  readonly embedded?: { readonly tokenFile: string; readonly token: string; readonly created: boolean };
  /**
   * Throws CONFIG_INVALID naming each `${NAME}` at or under one of `paths` whose variable is not
   * set: with `lenientEnv`, a command asks for the keys it reads, as it reads them.
   */
  need(...paths: string[]): void;
}

export interface ResolveConfigOptions {
  readonly createSecrets: boolean;
  /**
   * A `${NAME}` not set is no error until its key is `need`ed (`runs`, `requests`, `replay` and
   * `send` read a few keys of a file written for `serve`); default: every one must be set.
   */
  readonly lenientEnv?: boolean;
}

const needNothing = () => {};

/**
 * The config file a command reads (docs/configuration.md): `--config FILE`, else `HOOKD_CONFIG`,
 * else `./hookd.json5` when there is one; undefined means the embedded default.
 */
export function configFileOf(option: string | undefined, io: CliIo): string | undefined {
  const chosen = option || io.env.HOOKD_CONFIG;
  if (chosen) return resolve(io.cwd, chosen);
  const beside = join(io.cwd, DEFAULT_CONFIG_FILE);
  return existsSync(beside) ? beside : undefined;
}

/** The most a `.env` may hold. */
const MAX_DOTENV_BYTES = 1024 * 1024;

/** The environment for `${NAME}` in `file`: a `.env` beside it fills in what the process's own environment lacks. */
export function envFor(file: string, io: CliIo): NodeJS.ProcessEnv {
  const dotenv = join(dirname(file), '.env');
  if (!existsSync(dotenv)) return io.env;
  // Only a regular file, bounded: a FIFO in its place must not hold a start or a reload.
  const read = readRegularFile(realpathSync(dotenv), MAX_DOTENV_BYTES);
  if ('problem' in read) throw configInvalid([`${dotenv} ${read.problem}`]);
  return { ...parseEnv(read.text), ...io.env };
}

/** `--config FILE`, else `HOOKD_CONFIG`, else `./hookd.json5`, else the embedded default (docs/configuration.md#the-embedded-default). */
export function resolveConfig(file: string | undefined, io: CliIo, options: ResolveConfigOptions): ResolvedConfig {
  const chosen = configFileOf(file, io);
  if (chosen) return fromFile(chosen, envFor(chosen, io), options.lenientEnv === true);
  const tokenFile = join(io.cwd, 'data', 'hook-token');
  const secret = options.createSecrets ? readOrCreateSecret(tokenFile) : { value: 'x'.repeat(43), created: false };
  const config = loadConfig({
    data: { hooks: { enabled: true, token: secret.value }, storage: { path: 'data/hookd.db' } },
    baseDir: io.cwd,
    env: io.env,
  });
  return { config, embedded: { tokenFile, token: secret.value, created: secret.created }, need: needNothing };
}

function fromFile(file: string, env: NodeJS.ProcessEnv, lenient: boolean): ResolvedConfig {
  if (!lenient) return { config: loadConfig({ file, env }), need: needNothing };
  const report = inspectConfig({ file, env });
  const unset = report.unset ?? [];
  const problems = report.problems.filter((p) => !unset.some((u) => u.problem === p));
  if (problems.length > 0 || !report.config) throw configInvalid(report.problems, report.file);
  return {
    config: report.config,
    need(...paths) {
      const missing = unset.filter((u) => paths.some((path) => pathsMeet(u.path, path)));
      if (missing.length > 0)
        throw configInvalid(
          missing.map((u) => u.problem),
          report.file,
        );
    },
  };
}
