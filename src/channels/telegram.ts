import type { FromSchema } from 'json-schema-to-ts';
import { isHookdError } from '../errors.js';
import { BOT_API_MAX_CHARS, botApiKeys, sendBotMessage } from './bot-api.js';
import { defineChannelKind } from './kind.js';
import { type Renderer, renderMarkdown } from './markdown.js';
import { splitMarkdown } from './split.js';

const schema = {
  type: 'object',
  properties: { ...botApiKeys, apiBase: { ...botApiKeys.apiBase, default: 'https://api.telegram.org' } },
  required: ['botToken'],
} as const;
type Entry = FromSchema<typeof schema> & { readonly apiBase: string };

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const attribute = (s: string) => escapeHtml(s).replace(/"/g, '&quot;');

/** Markdown as Telegram's HTML parse mode takes it (core.telegram.org/bots/api#html-style). */
const html: Renderer = {
  text: escapeHtml,
  code: (s) => `<code>${escapeHtml(s)}</code>`,
  bold: (inner) => `<b>${inner}</b>`,
  italic: (inner) => `<i>${inner}</i>`,
  strike: (inner) => `<s>${inner}</s>`,
  link: (label, url) => `<a href="${attribute(url)}">${label}</a>`,
  codeBlock: (code, language) =>
    language === ''
      ? `<pre>${escapeHtml(code)}</pre>`
      : `<pre><code class="language-${attribute(language)}">${escapeHtml(code)}</code></pre>`,
  heading: (inner) => `<b>${inner}</b>`,
  quote: (lines) => `<blockquote>${lines}</blockquote>`,
  bullet: (inner) => `• ${inner}`,
};

/** Telegram's words when it cannot read the formatting (then the part goes again as plain text). */
const FORMATTING_REFUSED = /can't parse entities|unsupported start tag|can't find end tag/i;

/**
 * `telegram` (docs/channels.md#telegram): the Bot API's sendMessage with `parse_mode: "HTML"`, the
 * reply's Markdown as Telegram HTML in parts of at most 4096 characters (Telegram counts the text
 * without its tags); a part whose formatting Telegram refuses goes again at once as plain text.
 */
export const telegram = defineChannelKind<Entry>({
  keys: schema,
  secrets: (entry) => [entry.botToken],
  create: (entry, env) => ({
    split: (text) => splitMarkdown(text, BOT_API_MAX_CHARS),
    async send(message, signal) {
      const formatted = { chat_id: message.to, text: renderMarkdown(message.text, html), parse_mode: 'HTML' };
      try {
        await sendBotMessage(env, entry, formatted, signal);
      } catch (err) {
        const refusedFormatting =
          isHookdError(err, 'CHANNEL_REFUSED') &&
          err.params.status === 400 &&
          FORMATTING_REFUSED.test(err.params.description ?? '');
        if (!refusedFormatting || signal.aborted) throw err;
        await sendBotMessage(env, entry, { chat_id: message.to, text: message.text }, signal);
      }
    },
  }),
});
