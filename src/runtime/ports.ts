import type { ThinkingLevel } from '../action-shape.js';
import type { SessionMessage } from '../store/index.js';

/**
 * The ports the runtime calls out through. The runtime owns them; adapters in `providers/`
 * and `channels/` implement them, and `main.ts` plugs the configured ones in.
 */

/** One model call (docs/runtime.md#providers). */
export interface CompletionRequest {
  /** The model name, without the `provider/` prefix. */
  readonly model: string;
  readonly messages: readonly SessionMessage[];
  readonly thinking?: ThinkingLevel;
  /** Aborts the call (the run's timeout, or shutdown). */
  readonly signal: AbortSignal;
}

/**
 * A model backend (docs/runtime.md#providers). It makes one try per call: retries, their
 * waits and their record belong to the runtime (docs/runtime.md#attempts), on its clock.
 */
export interface ModelProvider {
  /**
   * Resolves with the reply, or rejects with an error whose message is safe to store (no
   * secrets): MODEL_REFUSED with the status (429 and 5xx are retried, after `retryAfterMs`
   * when the server said), MODEL_UNREACHABLE (retried), MODEL_CONTEXT_EXCEEDED,
   * MODEL_INVALID_ANSWER or MODEL_UNKNOWN (not retried); or anything once `signal` aborted.
   */
  complete(request: CompletionRequest): Promise<string>;
}

/** Every model the runtime may call, by its `provider/model` reference. */
export interface ModelRouter {
  complete(ref: string, request: Omit<CompletionRequest, 'model'>): Promise<string>;
}

/**
 * A chat surface replies are delivered to (docs/runtime.md#channels). Like a provider, it makes
 * one try per call; the runtime retries.
 */
export interface ChatChannel {
  readonly id: string;
  /** A reply as the messages the service takes, in order (chatnet: at most 4096 characters each). */
  split(text: string): string[];
  /**
   * Sends one message, one try: rejects with CHANNEL_REFUSED with the status (429 and 5xx are
   * retried, after `retryAfterMs` when the service said), CHANNEL_UNREACHABLE (retried) or
   * CHANNEL_UNCONFIRMED, never holding the bot token; or anything once `signal` aborted.
   */
  sendMessage(to: string, text: string, signal: AbortSignal): Promise<void>;
}
