import type { Config } from '../config/index.js';
import { hookdError } from '../errors.js';
import { createBuiltinProvider } from './builtin.js';
import { createOpenAiChatProvider } from './openai-chat.js';
import type { CompletionRequest, ModelProvider } from './types.js';

export { createBuiltinProvider } from './builtin.js';
export { createOpenAiChatProvider } from './openai-chat.js';
export type { ChatMessage, CompletionRequest, ModelProvider } from './types.js';

/** Calls a model by its `provider/model` reference. */
export interface ModelRouter {
  complete(ref: string, request: Omit<CompletionRequest, 'model'>): Promise<string>;
}

/** Every configured provider, plus `builtin`. */
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
