export { CHATNET_MAX_CHARS, createChatnetChannel } from './chatnet.js';
export { splitMessage } from './split.js';
export type { ChatChannel } from './types.js';
