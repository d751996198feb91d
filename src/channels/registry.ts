import type { Config } from '../config/index.js';
import type { ChatChannel } from '../runtime/index.js';
import { createChatnetChannel } from './chatnet.js';

/** The configured chat channels by id (today `chatnet`, when `channels.chatnet` is set). */
export function createChannels(config: Pick<Config, 'channels'>): ReadonlyMap<string, ChatChannel> {
  const channels = new Map<string, ChatChannel>();
  if (config.channels.chatnet) channels.set('chatnet', createChatnetChannel(config.channels.chatnet));
  return channels;
}
