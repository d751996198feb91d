import type { Config } from '../config/index.js';
import { hookdError } from '../errors.js';
import type { ModelProvider, ModelRouter } from '../runtime/index.js';
import { createBuiltinProvider } from './builtin.js';
import { createOpenAiChatProvider } from './openai-chat.js';

/** The runtime's ModelRouter over every configured provider, plus `builtin`. */
export function createModelRouter(config: Pick<Config, 'models'>): ModelRouter {
  const providers = new Map<string, ModelProvider>([['builtin', createBuiltinProvider()]]);
  for (const [id, provider] of Object.entries(config.models.providers)) {
    if (provider) providers.set(id, createOpenAiChatProvider(provider));
  }
  return {
    complete(ref, request) {
      const slash = ref.indexOf('/');
      const provider = providers.get(ref.slice(0, slash));
      if (!provider) return Promise.reject(hookdError('UNKNOWN_PROVIDER', { provider: ref.slice(0, slash) }));
      return provider.complete({ ...request, model: ref.slice(slash + 1) });
    },
  };
}
