export { CHATNET_MAX_CHARS, createChatnetChannel } from './chatnet.js';
export { createChannels } from './registry.js';
export { splitMessage } from './split.js';
