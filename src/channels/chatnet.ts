import type { ChatnetConfig } from '../config/index.js';
import { hookdError, isHookdError } from '../errors.js';
import type { ChatChannel } from '../runtime/index.js';
import { undiciRequest as request } from '../undici.js';
import { splitMessage } from './split.js';

export const CHATNET_MAX_CHARS = 4096;
/** The longest excerpt of an answer or error kept (docs/runtime.md#attempts). */
const EXCERPT_CHARS = 300;

interface BotApiAnswer {
  ok?: boolean;
  description?: string;
  parameters?: { retry_after?: number };
}

/** `retry_after` (the answer's, else the header's) in milliseconds, when it is a number of seconds. */
function retryAfterMsOf(answer: BotApiAnswer, header: string | string[] | undefined): number | undefined {
  const raw = answer.parameters?.retry_after ?? (typeof header === 'string' && header.trim() !== '' ? header : NaN);
  const seconds = Number(raw);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : undefined;
}

/**
 * The Bot-API-style chat service: `POST {apiBase}/bot{botToken}/sendMessage` with
 * `{ chat_id, text }`, one try per message; texts over 4096 characters go as several messages.
 * Failures are classified for the runtime, which retries 429 (after `retry_after`), 5xx and
 * network errors (docs/runtime.md#attempts).
 */
export function createChatnetChannel(config: ChatnetConfig): ChatChannel {
  const url = `${config.apiBase.replace(/\/+$/, '')}/bot${config.botToken}/sendMessage`;
  /** Text from the service or the network, bot token masked (a URL in an error holds it), cut. */
  const masked = (text: string) => text.split(config.botToken).join('[REDACTED]').slice(0, EXCERPT_CHARS);

  return {
    id: 'chatnet',
    split: (text) => splitMessage(text, CHATNET_MAX_CHARS),
    async sendMessage(to, text, signal) {
      try {
        const res = await request(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ chat_id: to, text }),
          signal,
        });
        const raw = await res.body.text();
        let answer: BotApiAnswer = {};
        try {
          answer = JSON.parse(raw) as BotApiAnswer;
        } catch {
          // Not JSON: judged by status below.
        }
        const status = res.statusCode;
        if (status >= 200 && status < 300) {
          if (answer.ok === true) return;
          throw hookdError('CHANNEL_UNCONFIRMED', { channel: 'chatnet', excerpt: masked(raw) });
        }
        const retryAfterMs = status === 429 ? retryAfterMsOf(answer, res.headers['retry-after']) : undefined;
        throw hookdError('CHANNEL_REFUSED', {
          channel: 'chatnet',
          status,
          ...(answer.description ? { description: masked(answer.description) } : {}),
          ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
        });
      } catch (err) {
        if (isHookdError(err) || signal.aborted) throw err;
        throw hookdError('CHANNEL_UNREACHABLE', { channel: 'chatnet', reason: masked((err as Error).message) });
      }
    },
  };
}
