export { createAnthropicMessagesProvider } from './anthropic-messages.js';
export { createBuiltinProvider } from './builtin.js';
export { createOpenAiChatProvider } from './openai-chat.js';
export { PROVIDER_APIS, providerLimits, providerProblems } from './registry.js';
export { createModelRouter } from './router.js';
