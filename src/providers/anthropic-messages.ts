import type { ThinkingLevel } from '../action-shape.js';
import { hookdError } from '../errors.js';
import { MAX_ANSWER_DEPTH, nestedDeeperThan } from '../json-depth.js';
import type { CompletionRequest, ModelProvider } from '../runtime/index.js';
import { type ProviderApi, type ProviderEntry, postModelCall } from './api.js';

/** The API version every request names (docs.anthropic.com/en/api/versioning). */
export const ANTHROPIC_VERSION = '2023-06-01';
/** `max_tokens` when the provider sets no `maxTokens`. */
const DEFAULT_MAX_TOKENS = 4096;

/** Thinking levels as extended thinking's `budget_tokens` (1,024 is the least the API takes). */
const BUDGET_TOKENS: Readonly<Record<Exclude<ThinkingLevel, 'off'>, number>> = {
  minimal: 1024,
  low: 1024,
  medium: 4096,
  high: 16384,
  xhigh: 32768,
};

interface MessagesAnswer {
  content?: { type?: string; text?: unknown }[];
  error?: { message?: unknown };
}

/** The body of one call: the system messages apart, `max_tokens`, and the thinking budget when one is asked. */
export function messagesBody(request: Omit<CompletionRequest, 'signal'>, maxTokens: number): string {
  const system = request.messages.filter((m) => m.role === 'system').map((m) => m.content);
  const messages = request.messages
    .filter((m) => m.role !== 'system')
    .map((m) => ({ role: m.role, content: m.content }));
  const budget = request.thinking && request.thinking !== 'off' ? BUDGET_TOKENS[request.thinking] : undefined;
  return JSON.stringify({
    model: request.model,
    // The budget counts within max_tokens: the reply keeps its maxTokens above it.
    max_tokens: budget === undefined ? maxTokens : budget + maxTokens,
    ...(system.length > 0 ? { system: system.join('\n\n') } : {}),
    messages,
    ...(budget === undefined ? {} : { thinking: { type: 'enabled', budget_tokens: budget } }),
  });
}

/** The reply: the `text` blocks of `content`, in order (thinking blocks are never a reply). */
function replyOf(answer: MessagesAnswer): string {
  if (!Array.isArray(answer.content)) throw hookdError('MODEL_INVALID_ANSWER', { problem: 'no-text' });
  const texts = answer.content.filter((block) => block?.type === 'text' && typeof block.text === 'string');
  if (texts.length === 0) throw hookdError('MODEL_INVALID_ANSWER', { problem: 'no-text' });
  return texts.map((block) => block.text as string).join('');
}

/** The API's own words of a refusal (`error.message`), else the body. */
function wordsOf(text: string): string {
  if (nestedDeeperThan(text, MAX_ANSWER_DEPTH)) return text;
  try {
    const message = (JSON.parse(text) as MessagesAnswer).error?.message;
    return typeof message === 'string' ? message : text;
  } catch {
    return text;
  }
}

/**
 * `api: "anthropic-messages"` (docs/runtime.md#providers): one `POST {baseUrl}/v1/messages` per
 * call. 429, 529 (overloaded) and other 5xx are refusals the runtime retries; a 400 saying the
 * prompt is too long (or a 413) is MODEL_CONTEXT_EXCEEDED.
 */
export function createAnthropicMessagesProvider(config: ProviderEntry): ModelProvider {
  const url = `${config.baseUrl.replace(/\/+$/, '')}/v1/messages`;
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'anthropic-version': ANTHROPIC_VERSION,
  };
  if (config.apiKey) headers['x-api-key'] = config.apiKey;
  const maxTokens = config.maxTokens ?? DEFAULT_MAX_TOKENS;

  return {
    async complete({ signal, ...call }: CompletionRequest) {
      const body = messagesBody(call, maxTokens);
      return postModelCall(url, { headers, body, signal }, config.apiKey, {
        reply: (answer) => replyOf(answer as MessagesAnswer),
        // A 400 saying the prompt is too long, or a 413: the same request cannot succeed.
        isContextRefusal: (status, text) => (status === 400 && /prompt is too long/i.test(text)) || status === 413,
        wordsOf,
      });
    },
  };
}

/** `anthropic-messages`: it has no keys of its own (`maxTokens` is every provider's). */
export const anthropicMessages: ProviderApi = { create: createAnthropicMessagesProvider };
