export { CHATNET_MAX_CHARS, createChatnetChannel } from './chatnet.js';
export { CHANNEL_KINDS, channelLimits, channelProblems, createChannels } from './registry.js';
export { splitMarkdown, splitMessage } from './split.js';
