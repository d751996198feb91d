import { setTimeout as sleep } from 'node:timers/promises';
import { backoffMs } from '../backoff.js';
import type { ProviderConfig } from '../config/index.js';
import { hookdError, isHookdError } from '../errors.js';
import type { CompletionRequest, ModelProvider } from '../runtime/index.js';
import { undiciRequest as request } from '../undici.js';

const BACKOFF = { minMs: 250, maxMs: 5_000 } as const;

interface ChatCompletion {
  choices?: { message?: { content?: unknown } }[];
}

/**
 * The start of an error body, safe to store in a run, log and summarise: a server that
 * echoes the request's API key gets it masked (before cutting, so no piece of it survives).
 */
export function excerptOf(body: string, apiKey: string | undefined): string {
  const masked = apiKey ? body.split(apiKey).join('[REDACTED]') : body;
  return masked.slice(0, 300);
}

/** Extracts `choices[0].message.content` (a string, or an array of text parts). */
function contentOf(body: ChatCompletion): string {
  const content = body.choices?.[0]?.message?.content;
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content.map((part) => (typeof part?.text === 'string' ? part.text : '')).join('');
  }
  throw hookdError('MODEL_INVALID_ANSWER', { problem: 'no-content' });
}

/**
 * `api: "openai-chat"`: `POST {baseUrl}/chat/completions`. 429 and 5xx are retried with
 * backoff (honouring `Retry-After`) until the request's signal aborts it.
 */
export function createOpenAiChatProvider(config: ProviderConfig): ModelProvider {
  const url = `${config.baseUrl.replace(/\/+$/, '')}/chat/completions`;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (config.apiKey) headers.authorization = `Bearer ${config.apiKey}`;

  return {
    async complete({ model, messages, thinking, signal }: CompletionRequest) {
      const body = JSON.stringify({
        model,
        messages,
        ...(thinking && thinking !== 'off' ? { reasoning_effort: thinking } : {}),
      });
      /** The last retried failure, so that a call cut off by its time limit says what went wrong. */
      let last: string | undefined;
      // Cut off (time limit or shutdown) after failures: the failures, not only the cut, are the news.
      const aborted = (attempts: number) =>
        last === undefined
          ? signal.reason
          : hookdError('MODEL_UNAVAILABLE', { attempts, last }, { cause: signal.reason });
      for (let attempt = 0; ; attempt++) {
        let retryAfterMs: number | undefined;
        try {
          const res = await request(url, { method: 'POST', headers, body, signal });
          const text = await res.body.text();
          if (res.statusCode >= 200 && res.statusCode < 300) return contentOf(JSON.parse(text) as ChatCompletion);
          if (res.statusCode !== 429 && res.statusCode < 500) {
            throw hookdError('MODEL_REFUSED', { status: res.statusCode, excerpt: excerptOf(text, config.apiKey) });
          }
          last = `HTTP ${res.statusCode} ${excerptOf(text, config.apiKey)}`.trim();
          const header = Number(res.headers['retry-after']);
          if (Number.isFinite(header) && header >= 0) retryAfterMs = header * 1000;
        } catch (err) {
          if (signal.aborted) throw aborted(attempt);
          if (isHookdError(err)) throw err;
          if (err instanceof SyntaxError) throw hookdError('MODEL_INVALID_ANSWER', { problem: 'invalid-json' });
          // Network errors are retried like a 5xx.
          last = excerptOf((err as Error).message, config.apiKey);
        }
        try {
          await sleep(retryAfterMs ?? backoffMs(attempt, BACKOFF), undefined, { signal });
        } catch {
          throw aborted(attempt + 1);
        }
      }
    },
  };
}
