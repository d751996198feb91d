import type { AgentDefaults, Config } from '../config/index.js';
import { hookdError } from '../errors.js';

const REF = /^([A-Za-z0-9_.-]+)\/(\S+)$/;

/** Resolves model overrides: alias → allowlist → provider (docs/http.md#post-hooksagent). */
export interface ModelCatalog {
  readonly defaultModel: string;
  /** Returns the `provider/model` in force, or throws a 400 HookdError. */
  resolve(input: string): string;
}

/** Builds the catalog from `agents.defaults` and `models.providers`. */
export function createModelCatalog(config: Pick<Config, 'agents' | 'models'>): ModelCatalog {
  const defaults: AgentDefaults = config.agents.defaults;
  const providers = new Set(['builtin', ...Object.keys(config.models.providers)]);
  const aliases = new Map<string, string>();
  let allowed: Set<string> | undefined;
  const models = defaults.models;
  if (Array.isArray(models)) {
    allowed = new Set(models);
  } else if (models) {
    allowed = new Set(Object.keys(models));
    for (const [ref, entry] of Object.entries(models)) if (entry?.alias) aliases.set(entry.alias, ref);
  }
  if (allowed?.size === 0) allowed = undefined;

  return {
    defaultModel: defaults.model,
    resolve(input) {
      const ref = aliases.get(input) ?? input;
      if (allowed && !allowed.has(ref)) throw hookdError('MODEL_NOT_ALLOWED', { ref });
      const match = REF.exec(ref);
      if (!match)
        throw hookdError('INVALID_FIELD', { field: 'model', expected: 'provider/model or a configured alias' });
      if (!providers.has(match[1] as string)) throw hookdError('UNKNOWN_PROVIDER', { provider: match[1] as string });
      return ref;
    },
  };
}
