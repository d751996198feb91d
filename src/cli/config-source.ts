import { join, resolve } from 'node:path';
import { type Config, configInvalid, inspectConfig, loadConfig, pathsMeet } from '../config/index.js';
import { readOrCreateSecret } from '../store/index.js';
import type { CliIo } from './io.js';

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

/** `--config FILE`, else `HOOKD_CONFIG`, else the embedded default (docs/configuration.md#the-embedded-default). */
export function resolveConfig(file: string | undefined, io: CliIo, options: ResolveConfigOptions): ResolvedConfig {
  const chosen = file ?? io.env.HOOKD_CONFIG;
  if (chosen) return fromFile(resolve(io.cwd, chosen), io.env, options.lenientEnv === true);
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
