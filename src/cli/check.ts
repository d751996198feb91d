import { createLogger } from '../log.js';
import { compileRoutes } from '../main.js';
import { resolveConfig } from './config-source.js';
import type { CliIo } from './io.js';

/** `hookd check [--config FILE]`: validates the config; non-zero with every problem named. */
export async function checkCommand(options: { config?: string }, io: CliIo): Promise<number> {
  const { config } = resolveConfig(options.config, io, { createSecrets: false });
  const { mappings, transforms } = await compileRoutes(config, createLogger({ level: 'silent' }));
  transforms.close();
  io.out(
    `hookd: configuration OK${config.file ? ` (${config.file})` : ' (embedded default)'}, ${mappings.mappings.length} mapping(s)`,
  );
  return 0;
}
