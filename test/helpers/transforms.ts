import { createModelCatalog } from '../../src/actions/index.js';
import type { Config } from '../../src/config/index.js';
import { compileMappings } from '../../src/mapping/index.js';

/** A transform host's `config` and `mappings` for a loaded config: its mappings compiled as `serve` compiles them. */
export function hostConfig(config: Config) {
  return { config, mappings: compileMappings(config, createModelCatalog(config)) };
}
