export { CHATNET_MAX_CHARS, createChatnetChannel } from './chatnet.js';
export { splitMessage } from './split.js';
export { ChannelError, type ChatChannel } from './types.js';
