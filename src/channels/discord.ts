import type { FromSchema } from 'json-schema-to-ts';
import { HTTP_URL } from '../config/index.js';
import { isSuccess, postTry, refusal } from './http-try.js';
import { defineChannelKind, jsonOf, pathOf, secondsToMs } from './kind.js';
import { splitMarkdown } from './split.js';

/** Discord's longest message content, in characters. */
export const DISCORD_MAX_CHARS = 2000;

const schema = {
  type: 'object',
  properties: { webhookUrl: { ...HTTP_URL, writeOnly: true } },
  required: ['webhookUrl'],
} as const;
type Entry = FromSchema<typeof schema>;

interface DiscordAnswer {
  message: string;
  code: number;
  retry_after: number;
}

/**
 * `discord` (docs/channels.md#discord): an incoming webhook, `POST {webhookUrl}?wait=true` with `{
 * content }` (and `thread_id` when `to` names a thread), the reply's Markdown as it is (Discord
 * renders it) in parts of at most 2,000 characters. Mentions in a reply never ping anyone. The URL
 * holds the webhook's token: it is masked like a password.
 */
export const discord = defineChannelKind<Entry>({
  keys: schema,
  needsRecipient: () => false,
  secrets: (entry) => [entry.webhookUrl, pathOf(entry.webhookUrl), entry.webhookUrl.split('/').at(-1)],
  create: (entry, env) => ({
    split: (text) => splitMarkdown(text, DISCORD_MAX_CHARS),
    async send(message, signal) {
      const url = new URL(entry.webhookUrl);
      url.searchParams.set('wait', 'true');
      if (message.to !== '') url.searchParams.set('thread_id', message.to);
      const body = JSON.stringify({ content: message.text, allowed_mentions: { parse: [] } });
      const headers = { 'content-type': 'application/json' };
      const answer = await postTry(env, url.toString(), { headers, body }, signal);
      if (isSuccess(answer)) return;
      const refused = jsonOf<DiscordAnswer>(answer.raw);
      const words =
        typeof refused.message === 'string'
          ? `${refused.message}${refused.code === undefined ? '' : ` (code ${refused.code})`}`
          : answer.raw;
      throw refusal(env, answer, words, secondsToMs(refused.retry_after));
    },
  }),
});
