import type { FromSchema } from 'json-schema-to-ts';
import type { ChatChannel } from '../runtime/index.js';
import { BOT_API_MAX_CHARS, botApiKeys, sendBotMessage } from './bot-api.js';
import { channelOf } from './channel.js';
import { defineChannelKind } from './kind.js';
import { splitMarkdown } from './split.js';

export const CHATNET_MAX_CHARS = BOT_API_MAX_CHARS;

const schema = { type: 'object', properties: botApiKeys, required: ['apiBase', 'botToken'] } as const;
type Entry = FromSchema<typeof schema>;

/**
 * `chatnet` (docs/channels.md#chatnet): a Bot-API-style chat service, `POST
 * {apiBase}/bot{botToken}/sendMessage` with `{ chat_id, text }`, the reply as plain text in parts
 * of at most 4096 characters.
 */
export const chatnet = defineChannelKind<Entry>({
  keys: schema,
  secrets: (entry) => [entry.botToken],
  create: (entry, env) => ({
    split: (text) => splitMarkdown(text, CHATNET_MAX_CHARS),
    send: (message, signal) => sendBotMessage(env, entry, { chat_id: message.to, text: message.text }, signal),
  }),
});

/** A chatnet channel with the id `chatnet`, as an entry keyed `chatnet` makes it. */
export function createChatnetChannel(entry: Entry): ChatChannel {
  return channelOf(chatnet, entry, { id: 'chatnet' });
}
