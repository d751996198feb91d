import { configInvalid } from '../config/index.js';
import { hookdError } from '../errors.js';
import type { ModelProvider, ModelRouter } from '../runtime/index.js';
import type { ProviderEntry } from './api.js';
import { createBuiltinProvider } from './builtin.js';
import { checkProviders } from './registry.js';

/**
 * The runtime's ModelRouter over every configured provider, each made by its API's module, plus
 * `builtin`; throws CONFIG_INVALID naming every provider whose API or keys are wrong.
 */
export function createModelRouter(config: {
  readonly models: {
    readonly providers: Readonly<Record<string, (ProviderEntry & { readonly api?: string }) | undefined>>;
  };
  readonly file?: string;
}): ModelRouter {
  const { providers: checked, problems } = checkProviders(config);
  if (problems.length > 0) throw configInvalid(problems, config.file);
  const providers = new Map<string, ModelProvider>([['builtin', createBuiltinProvider()]]);
  for (const [name, { api, entry }] of checked) providers.set(name, api.create(entry));
  return {
    complete(ref, request) {
      const slash = ref.indexOf('/');
      const provider = providers.get(ref.slice(0, slash));
      if (!provider) return Promise.reject(hookdError('UNKNOWN_PROVIDER', { provider: ref.slice(0, slash) }));
      return provider.complete({ ...request, model: ref.slice(slash + 1) });
    },
  };
}
