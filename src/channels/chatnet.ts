import { setTimeout as sleep } from 'node:timers/promises';
import { backoffMs } from '../backoff.js';
import type { ChatnetConfig } from '../config/index.js';
import { type HookdError, hookdError, isHookdError } from '../errors.js';
import type { ChatChannel } from '../runtime/index.js';
import { undiciRequest as request } from '../undici.js';
import { splitMessage } from './split.js';

export const CHATNET_MAX_CHARS = 4096;
const ATTEMPTS = 4;
/** Without a retry_after, waits of 0.5, 1 and 2 s between the four attempts. */
const BACKOFF = { minMs: 500, maxMs: 4_000 } as const;
const MAX_RETRY_AFTER_S = 60;
const REQUEST_TIMEOUT_MS = 15_000;

interface BotApiAnswer {
  ok?: boolean;
  description?: string;
  parameters?: { retry_after?: number };
}

/**
 * The Bot-API-style chat service: `POST {apiBase}/bot{botToken}/sendMessage` with
 * `{ chat_id, text }`; texts over 4096 characters go as several messages; a 429 waits
 * `parameters.retry_after` seconds; 5xx and network errors retry with backoff.
 */
export function createChatnetChannel(config: ChatnetConfig): ChatChannel {
  const url = `${config.apiBase.replace(/\/+$/, '')}/bot${config.botToken}/sendMessage`;

  async function sendOne(to: string, text: string, signal: AbortSignal | undefined): Promise<void> {
    let last: HookdError | undefined;
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      let waitMs = backoffMs(attempt, BACKOFF);
      try {
        const res = await request(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ chat_id: to, text }),
          signal: signal
            ? AbortSignal.any([signal, AbortSignal.timeout(REQUEST_TIMEOUT_MS)])
            : AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        });
        const raw = await res.body.text();
        let answer: BotApiAnswer = {};
        try {
          answer = JSON.parse(raw) as BotApiAnswer;
        } catch {
          // Not JSON: judged by status below.
        }
        if (res.statusCode >= 200 && res.statusCode < 300 && answer.ok === true) return;
        last = hookdError('CHANNEL_REFUSED', {
          channel: 'chatnet',
          status: res.statusCode,
          ...(answer.description ? { description: answer.description } : {}),
        });
        if (res.statusCode === 429) {
          const retryAfter = Number(answer.parameters?.retry_after ?? res.headers['retry-after']);
          if (Number.isFinite(retryAfter) && retryAfter >= 0) waitMs = Math.min(retryAfter, MAX_RETRY_AFTER_S) * 1000;
        } else if (res.statusCode < 500 && res.statusCode >= 300) {
          throw last;
        } else if (res.statusCode < 300) {
          throw hookdError('CHANNEL_UNCONFIRMED', { channel: 'chatnet', excerpt: raw.slice(0, 200) });
        }
      } catch (err) {
        if (isHookdError(err)) throw err;
        if (signal?.aborted) throw hookdError('SHUTTING_DOWN', { what: 'delivery' });
        last = hookdError('CHANNEL_UNREACHABLE', { channel: 'chatnet', reason: (err as Error).message });
      }
      if (attempt < ATTEMPTS - 1) {
        await sleep(waitMs, undefined, signal ? { signal } : undefined).catch(() => {
          throw hookdError('SHUTTING_DOWN', { what: 'delivery' });
        });
      }
    }
    throw hookdError('DELIVERY_GAVE_UP', { reason: last?.message ?? 'no answer', attempts: ATTEMPTS }, { cause: last });
  }

  return {
    id: 'chatnet',
    async send(to, text, signal) {
      for (const piece of splitMessage(text, CHATNET_MAX_CHARS)) await sendOne(to, piece, signal);
    },
  };
}
