import { join, resolve } from 'node:path';
import { type Config, loadConfig } from '../config/index.js';
import { readOrCreateSecret } from '../store/index.js';
import type { CliIo } from './io.js';

export interface ResolvedConfig {
  readonly config: Config;
  /** Set for the embedded default: where its hook token is stored, and whether it was just made. */
  readonly embedded?: { readonly tokenFile: string; readonly token: string; readonly created: boolean };
}

/** `--config FILE`, else `HOOKD_CONFIG`, else the embedded default (docs/configuration.md#the-embedded-default). */
export function resolveConfig(
  file: string | undefined,
  io: CliIo,
  options: { createSecrets: boolean },
): ResolvedConfig {
  const chosen = file ?? io.env.HOOKD_CONFIG;
  if (chosen) return { config: loadConfig({ file: resolve(io.cwd, chosen), env: io.env }) };
  const tokenFile = join(io.cwd, 'data', 'hook-token');
  const secret = options.createSecrets ? readOrCreateSecret(tokenFile) : { value: 'x'.repeat(43), created: false };
  const config = loadConfig({
    data: { hooks: { enabled: true, token: secret.value }, storage: { path: 'data/hookd.db' } },
    baseDir: io.cwd,
    env: io.env,
  });
  return { config, embedded: { tokenFile, token: secret.value, created: secret.created } };
}
