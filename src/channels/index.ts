export { CHATNET_MAX_CHARS, createChatnetChannel } from './chatnet.js';
export { MAX_ANSWER_BYTES } from './http-try.js';
export { CHANNEL_KINDS, channelLimits, channelProblems, createChannels } from './registry.js';
export { splitMarkdown, splitMessage } from './split.js';
