import { existsSync, readFileSync } from 'node:fs';
import type { Config, MappingConfig } from '../config/index.js';

const PRESETS_DIR = new URL('../../presets/', import.meta.url);

/** A preset's mapping as shipped in `presets/<name>.json`. */
export function readPreset(name: string): MappingConfig {
  return JSON.parse(readFileSync(new URL(`${name}.json`, PRESETS_DIR), 'utf8')) as MappingConfig;
}

/**
 * The enabled presets as mappings, with `hooks.mail` settings applied to `mail`, each with its
 * place in `hooks.presets`. A name with no preset is left out: the config schema refuses it
 * (and `hookd check` goes on to compile the rest).
 */
export function presetMappings(config: Pick<Config, 'hooks'>): { mapping: MappingConfig; index: number }[] {
  return config.hooks.presets.flatMap((name, index) => {
    if (!/^[a-z0-9-]+$/.test(name) || !existsSync(new URL(`${name}.json`, PRESETS_DIR))) return [];
    return [{ mapping: withSettings(name, readPreset(name), config), index }];
  });
}

function withSettings(name: string, preset: MappingConfig, config: Pick<Config, 'hooks'>): MappingConfig {
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
}
