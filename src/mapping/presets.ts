import { readFileSync } from 'node:fs';
import type { Config, MappingConfig } from '../config/index.js';

const PRESETS_DIR = new URL('../../presets/', import.meta.url);

/** A preset's mapping as shipped in `presets/<name>.json`. */
export function readPreset(name: string): MappingConfig {
  return JSON.parse(readFileSync(new URL(`${name}.json`, PRESETS_DIR), 'utf8')) as MappingConfig;
}

/** The enabled presets as mappings, with `hooks.mail` settings applied to `mail`. */
export function presetMappings(config: Pick<Config, 'hooks'>): MappingConfig[] {
  return config.hooks.presets.map((name) => {
    const preset = readPreset(name);
    const mail = config.hooks.mail;
    if (name !== 'mail' || !mail) return preset;
    return {
      ...preset,
      ...(mail.model ? { model: mail.model } : {}),
      ...(mail.thinking ? { thinking: mail.thinking } : {}),
      ...(mail.allowUnsafeExternalContent === undefined
        ? {}
        : { allowUnsafeExternalContent: mail.allowUnsafeExternalContent }),
    };
  });
}
