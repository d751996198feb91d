import { HTTP_URL } from '../config/index.js';
import { hookdError } from '../errors.js';
import { cut, isSuccess, postTry, refusal } from './http-try.js';
import { jsonOf, type KindEnv, secondsToMs } from './kind.js';

/** A Bot-API-style service's keys (docs/channels.md): where it is and the bot's token. */
export const botApiKeys = {
  apiBase: HTTP_URL,
  botToken: { type: 'string', minLength: 1 },
} as const;

/** Bot API's longest message, in characters. */
export const BOT_API_MAX_CHARS = 4096;

interface BotApiAnswer {
  ok: boolean;
  description: string;
  parameters: { retry_after?: number };
}

/**
 * One `POST {apiBase}/bot{botToken}/sendMessage` of `payload`: resolves on `{ ok: true }`; a 2xx
 * without it is CHANNEL_UNCONFIRMED; any other answer CHANNEL_REFUSED with the service's
 * `description` and, on a 429, its `parameters.retry_after` (else `Retry-After`).
 */
export async function sendBotMessage(
  env: KindEnv,
  entry: { readonly apiBase: string; readonly botToken: string },
  payload: object,
  signal: AbortSignal,
): Promise<void> {
  const url = `${entry.apiBase.replace(/\/+$/, '')}/bot${entry.botToken}/sendMessage`;
  const headers = { 'content-type': 'application/json' };
  const answer = await postTry(env, url, { headers, body: JSON.stringify(payload) }, signal);
  const body = jsonOf<BotApiAnswer>(answer.raw);
  if (isSuccess(answer)) {
    if (body.ok === true) return;
    throw hookdError('CHANNEL_UNCONFIRMED', { channel: env.id, excerpt: cut(env, answer.raw) });
  }
  throw refusal(env, answer, body.description, secondsToMs(body.parameters?.retry_after));
}
