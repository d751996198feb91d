import type { ProviderConfig } from '../config/index.js';
import { hookdError, isHookdError } from '../errors.js';
import type { CompletionRequest, ModelProvider } from '../runtime/index.js';
import { undiciRequest as request } from '../undici.js';

/** The longest excerpt of an answer or error kept (docs/runtime.md#attempts). */
const EXCERPT_CHARS = 300;

interface ChatCompletion {
  choices?: { message?: { content?: unknown } }[];
}

/**
 * The start of an error body, safe to store in a run, log and summarise: a server that
 * echoes the request's API key gets it masked (before cutting, so no piece of it survives).
 */
export function excerptOf(body: string, apiKey: string | undefined): string {
  const masked = apiKey ? body.split(apiKey).join('[REDACTED]') : body;
  return masked.slice(0, EXCERPT_CHARS);
}

/**
 * A refusal that names the context, its tokens or the request's length (OpenAI's
 * `context_length_exceeded`, llama.cpp's "exceeds the available context size", vLLM's "maximum
 * context length"): sending the same request again cannot succeed (docs/runtime.md#context-length).
 */
const CONTEXT_REFUSAL = /context|tokens|too long|too large|length/i;

/** True when an answer of `status` with `body` refuses the request as too long for the model. */
function isContextRefusal(status: number, body: string): boolean {
  return (status === 400 || status === 413) && CONTEXT_REFUSAL.test(body);
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

/** `Retry-After` in milliseconds, when it is a number of seconds. */
function retryAfterMsOf(header: string | string[] | undefined): number | undefined {
  if (typeof header !== 'string' || header.trim() === '') return undefined;
  const seconds = Number(header);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : undefined;
}

/**
 * `api: "openai-chat"`: one `POST {baseUrl}/chat/completions` per call. Its failures are
 * classified for the runtime, which retries 429, 5xx and network errors
 * (docs/runtime.md#attempts).
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
      try {
        const res = await request(url, { method: 'POST', headers, body, signal });
        const text = await res.body.text();
        const status = res.statusCode;
        if (status >= 200 && status < 300) return contentOf(JSON.parse(text) as ChatCompletion);
        const excerpt = excerptOf(text, config.apiKey);
        if (isContextRefusal(status, text)) throw hookdError('MODEL_CONTEXT_EXCEEDED', { status, excerpt });
        const retryAfterMs = retryAfterMsOf(res.headers['retry-after']);
        throw hookdError('MODEL_REFUSED', { status, excerpt, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) });
      } catch (err) {
        if (isHookdError(err) || signal.aborted) throw err;
        if (err instanceof SyntaxError) throw hookdError('MODEL_INVALID_ANSWER', { problem: 'invalid-json' });
        throw hookdError('MODEL_UNREACHABLE', { reason: excerptOf((err as Error).message, config.apiKey) });
      }
    },
  };
}
