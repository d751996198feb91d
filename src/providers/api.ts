import type { KeysSchema } from '../config/index.js';
import { hookdError, isHookdError } from '../errors.js';
import { MAX_ANSWER_DEPTH, nestedDeeperThan } from '../json-depth.js';
import type { ModelProvider } from '../runtime/index.js';
import { maskerOf } from '../secret-text.js';
import { readAtMost, undiciRequest as request } from '../undici.js';

/**
 * What a provider API is (docs/runtime.md#adding-a-provider-api): one module, registered by name in
 * registry.ts, that owns its config keys, its one try per call, the classification of its failures
 * for the runtime's retries, and the credentials it masks. Nothing else names an API.
 */

/** `models.providers.<name>` as every API reads it (its own keys besides). */
export interface ProviderEntry {
  readonly baseUrl: string;
  readonly apiKey?: string;
  /** The longest reply asked for, in tokens, where the API takes a limit (default 4096). */
  readonly maxTokens?: number;
  readonly [key: string]: unknown;
}

/** A provider API: its own keys (a JSON Schema fragment) and the provider it makes of an entry. */
export interface ProviderApi {
  /** Its own keys (a flat JSON Schema fragment), beside the ones every provider has. */
  readonly keys?: KeysSchema;
  create(entry: ProviderEntry): ModelProvider;
}

/** The longest excerpt of an answer or error kept (docs/runtime.md#attempts). */
const EXCERPT_CHARS = 300;

/**
 * The start of an error body, safe to store in a run, log and summarise: a server that
 * echoes the request's API key gets it masked (before cutting, so no piece of it survives).
 */
export function excerptOf(body: string, apiKey: string | undefined): string {
  return maskerOf([apiKey])(body).slice(0, EXCERPT_CHARS);
}

/** The longest `Retry-After` a model call waits (a timer past 24.8 days would fire at once). */
export const MAX_MODEL_RETRY_AFTER_MS = 300_000;

/** `Retry-After` in milliseconds, when it is a number of seconds; at most MAX_MODEL_RETRY_AFTER_MS. */
export function retryAfterMsOf(header: string | string[] | undefined): number | undefined {
  if (typeof header !== 'string' || header.trim() === '') return undefined;
  const seconds = Number(header);
  return Number.isFinite(seconds) && seconds >= 0 ? Math.min(seconds * 1000, MAX_MODEL_RETRY_AFTER_MS) : undefined;
}

/** The most of a model's answer read (8 MiB): past it the call is MODEL_INVALID_ANSWER, not retried. */
export const MAX_MODEL_ANSWER_BYTES = 8 * 1_048_576;

/** How one API reads a call's answer: the reply of a 2xx, which refusals are about the context, a refusal's words. */
export interface ModelAnswers<T> {
  reply(answer: unknown): T;
  isContextRefusal(status: number, text: string): boolean;
  /** The part of a refusal's body worth an excerpt (default: all of it). */
  wordsOf?(text: string): string;
}

/**
 * One POST of a model call (docs/runtime.md#attempts): the reply of a 2xx; else
 * MODEL_CONTEXT_EXCEEDED, MODEL_REFUSED (with its `Retry-After`), MODEL_INVALID_ANSWER or
 * MODEL_UNREACHABLE, each excerpt masked of `apiKey`. An abort is thrown as it came.
 */
export async function postModelCall<T>(
  url: string,
  call: { readonly headers: Record<string, string>; readonly body: string; readonly signal: AbortSignal },
  apiKey: string | undefined,
  answers: ModelAnswers<T>,
): Promise<T> {
  try {
    const res = await request(url, { method: 'POST', ...call });
    const { text, cut } = await readAtMost(res.body, MAX_MODEL_ANSWER_BYTES);
    const status = res.statusCode;
    if (status >= 200 && status < 300) {
      if (cut) throw hookdError('MODEL_INVALID_ANSWER', { problem: 'too-large' });
      if (nestedDeeperThan(text, MAX_ANSWER_DEPTH)) throw hookdError('MODEL_INVALID_ANSWER', { problem: 'too-deep' });
      const parsed: unknown = JSON.parse(text);
      // `null` or a number is JSON and no answer: read as an empty one, it says what it lacks.
      return answers.reply(parsed !== null && typeof parsed === 'object' ? parsed : {});
    }
    const excerpt = excerptOf(answers.wordsOf ? answers.wordsOf(text) : text, apiKey);
    if (answers.isContextRefusal(status, text)) throw hookdError('MODEL_CONTEXT_EXCEEDED', { status, excerpt });
    const retryAfterMs = retryAfterMsOf(res.headers['retry-after']);
    throw hookdError('MODEL_REFUSED', { status, excerpt, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) });
  } catch (err) {
    if (isHookdError(err) || call.signal.aborted) throw err;
    if (err instanceof SyntaxError) throw hookdError('MODEL_INVALID_ANSWER', { problem: 'invalid-json' });
    throw hookdError('MODEL_UNREACHABLE', { reason: excerptOf((err as Error).message, apiKey) });
  }
}
