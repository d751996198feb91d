export { createBuiltinProvider } from './builtin.js';
export { createOpenAiChatProvider } from './openai-chat.js';
export { createModelRouter } from './router.js';
