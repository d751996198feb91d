import type { IncomingHttpHeaders } from 'node:http';
import { type HookdError, hookdError, isHookdError } from '../errors.js';
import { readAtMost, undiciRequest as request } from '../undici.js';
import { type KindEnv, secondsToMs } from './kind.js';

/** The longest excerpt of an answer or error kept (docs/runtime.md#attempts). */
export const EXCERPT_CHARS = 300;

/**
 * The most of an answer read (1 MiB): a chat service confirms in a few hundred bytes; past it
 * the rest is dropped, and a 2xx whose confirmation is cut off is CHANNEL_UNCONFIRMED.
 */
export const MAX_ANSWER_BYTES = 1_048_576;

/** What a service answered one try. */
export interface HttpAnswer {
  readonly status: number;
  readonly raw: string;
  readonly headers: IncomingHttpHeaders;
}

/**
 * One `POST` of `body` to `url`: the answer, whatever its status. A network error is
 * CHANNEL_UNREACHABLE with its reason masked (an error may quote the URL, which can hold a
 * token); after `signal` aborted, whatever the abort made is thrown as it is.
 */
export async function postTry(
  env: KindEnv,
  url: string,
  init: { readonly headers: Record<string, string>; readonly body: string },
  signal: AbortSignal,
): Promise<HttpAnswer> {
  try {
    const res = await request(url, { method: 'POST', headers: init.headers, body: init.body, signal });
    return { status: res.statusCode, raw: (await readAtMost(res.body, MAX_ANSWER_BYTES)).text, headers: res.headers };
  } catch (err) {
    if (isHookdError(err) || signal.aborted) throw err;
    throw hookdError('CHANNEL_UNREACHABLE', { channel: env.id, reason: cut(env, (err as Error).message) });
  }
}

/** `text` with the entry's credentials masked (before cutting: no piece of one survives), cut. */
export function cut(env: KindEnv, text: string): string {
  return env.mask(text).slice(0, EXCERPT_CHARS);
}

/**
 * CHANNEL_REFUSED for an answer: its status, the service's own words (a field of its answer,
 * used only when it is text), and on a 429 its retry hint (`retryAfterMs`, else the
 * `Retry-After` header). The runtime retries 429 and 5xx.
 */
export function refusal(
  env: KindEnv,
  answer: HttpAnswer,
  field: unknown,
  retryAfterMs?: number,
): HookdError<'CHANNEL_REFUSED'> {
  const words = typeof field === 'string' ? field : undefined;
  const hint = answer.status === 429 ? (retryAfterMs ?? secondsToMs(answer.headers['retry-after'])) : undefined;
  return hookdError('CHANNEL_REFUSED', {
    channel: env.id,
    status: answer.status,
    ...(words ? { description: cut(env, words) } : {}),
    ...(hint === undefined ? {} : { retryAfterMs: hint }),
  });
}

/** True for a 2xx answer. */
export const isSuccess = (answer: HttpAnswer) => answer.status >= 200 && answer.status < 300;
