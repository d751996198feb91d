import type { FromSchema } from 'json-schema-to-ts';
import { HTTP_URL } from '../config/index.js';
import { hookdError } from '../errors.js';
import { cut, isSuccess, postTry, refusal } from './http-try.js';
import { defineChannelKind, jsonOf, type KindEnv, type OutgoingMessage, pathOf } from './kind.js';
import { type Renderer, renderMarkdown } from './markdown.js';
import { splitMarkdown } from './split.js';

/** The longest message sent, in characters of mrkdwn (Slack advises at most 4,000). */
export const SLACK_MAX_CHARS = 4000;

const schema = {
  type: 'object',
  properties: {
    botToken: { type: 'string', minLength: 1 },
    apiBase: { ...HTTP_URL, default: 'https://slack.com/api' },
    webhookUrl: { ...HTTP_URL, writeOnly: true },
  },
} as const;
type Entry = FromSchema<typeof schema> & { readonly apiBase: string };

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
/**
 * A URL as `<url|label>` holds it: `&` as Slack's entity, and `<`, `>` and `|`, which would end
 * the URL or the link, percent-encoded. The label is text, already escaped; Slack reads up to the
 * first `|` as the URL, so a `|` in the label needs nothing.
 */
const slackUrl = (url: string) => url.replace(/&/g, '&amp;').replace(/[<>|]/g, encodeURIComponent);

/** Markdown as Slack's mrkdwn (api.slack.com/reference/surfaces/formatting). */
const mrkdwn: Renderer = {
  text: escapeHtml,
  code: (s) => `\`${escapeHtml(s)}\``,
  bold: (inner) => `*${inner}*`,
  italic: (inner) => `_${inner}_`,
  strike: (inner) => `~${inner}~`,
  link: (label, url) => `<${slackUrl(url)}|${label}>`,
  codeBlock: (code) => `\`\`\`\n${escapeHtml(code)}\n\`\`\``,
  heading: (inner) => `*${inner}*`,
  quote: (lines) =>
    lines
      .split('\n')
      .map((line) => `> ${line}`)
      .join('\n'),
  bullet: (inner) => `• ${inner}`,
};

/** `ok: false` errors that say Slack, not the request, failed: tried again. */
const TRANSIENT_ERRORS = new Set([
  'internal_error',
  'fatal_error',
  'service_unavailable',
  'request_timeout',
  'ratelimited',
]);

interface SlackAnswer {
  ok: boolean;
  error: string;
}

/** `chat.postMessage` with the bot token: `{ ok: false, error }` is refused with its `error`. */
async function postMessage(env: KindEnv, entry: Entry, message: OutgoingMessage, signal: AbortSignal) {
  const url = `${entry.apiBase.replace(/\/+$/, '')}/chat.postMessage`;
  const headers = { 'content-type': 'application/json; charset=utf-8', authorization: `Bearer ${entry.botToken}` };
  const text = renderMarkdown(message.text, mrkdwn);
  const answer = await postTry(env, url, { headers, body: JSON.stringify({ channel: message.to, text }) }, signal);
  const body = jsonOf<SlackAnswer>(answer.raw);
  if (!isSuccess(answer)) throw refusal(env, answer, typeof body.error === 'string' ? body.error : answer.raw);
  if (body.ok === true) return;
  if (typeof body.error !== 'string')
    throw hookdError('CHANNEL_UNCONFIRMED', { channel: env.id, excerpt: cut(env, answer.raw) });
  const transient = TRANSIENT_ERRORS.has(body.error);
  throw hookdError('CHANNEL_REFUSED', {
    channel: env.id,
    status: answer.status,
    description: cut(env, body.error),
    transient,
  });
}

/** An incoming webhook: `{ text }` to its URL, answered `ok`; any other answer is refused with its text. */
async function postToWebhook(env: KindEnv, url: string, message: OutgoingMessage, signal: AbortSignal) {
  const headers = { 'content-type': 'application/json; charset=utf-8' };
  const text = renderMarkdown(message.text, mrkdwn);
  const answer = await postTry(env, url, { headers, body: JSON.stringify({ text }) }, signal);
  if (isSuccess(answer) && answer.raw.trim() === 'ok') return;
  throw refusal(env, answer, answer.raw.trim());
}

/**
 * `slack` (docs/channels.md#slack): `chat.postMessage` with a bot token to the channel `to`, or
 * an incoming webhook's URL (which names its channel: `to` is not needed); the reply's Markdown
 * as mrkdwn in parts of at most 4,000 characters.
 */
export const slack = defineChannelKind<Entry>({
  keys: schema,
  problems: (entry) =>
    (entry.botToken === undefined) === (entry.webhookUrl === undefined)
      ? ['botToken: expected botToken (chat.postMessage) or webhookUrl (an incoming webhook), one of them']
      : [],
  needsRecipient: (entry) => entry.webhookUrl === undefined,
  secrets: (entry) => [entry.botToken, entry.webhookUrl, pathOf(entry.webhookUrl)],
  create: (entry, env) => ({
    split: (text) => splitMarkdown(text, SLACK_MAX_CHARS, (part) => renderMarkdown(part, mrkdwn).length),
    send: (message, signal) =>
      entry.webhookUrl === undefined
        ? postMessage(env, entry, message, signal)
        : postToWebhook(env, entry.webhookUrl, message, signal),
  }),
});
