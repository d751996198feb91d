import { hookdError } from '../errors.js';
import type { CompletionRequest, ModelProvider } from '../runtime/index.js';
import { type ProviderApi, type ProviderEntry, postModelCall } from './api.js';

interface ChatCompletion {
  choices?: { message?: { content?: unknown } }[];
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
    // Parts without text (nulls, numbers, images) are no reply: as an answer without content.
    const texts = content.filter((part) => typeof part?.text === 'string').map((part) => part.text as string);
    if (texts.length > 0) return texts.join('');
  }
  throw hookdError('MODEL_INVALID_ANSWER', { problem: 'no-content' });
}

/**
 * `api: "openai-chat"`: one `POST {baseUrl}/chat/completions` per call. Its failures are
 * classified for the runtime, which retries 429, 5xx and network errors
 * (docs/runtime.md#attempts).
 */
export function createOpenAiChatProvider(config: ProviderEntry): ModelProvider {
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
      return postModelCall(url, { headers, body, signal }, config.apiKey, {
        reply: (answer) => contentOf(answer as ChatCompletion),
        isContextRefusal,
      });
    },
  };
}

/** `openai-chat` (docs/runtime.md#providers): it has no keys of its own. */
export const openAiChat: ProviderApi = { create: createOpenAiChatProvider };
