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

/** A model backend (docs/runtime.md#providers). */
export interface ModelProvider {
  /** Resolves with the reply; rejects with a MODEL_* error whose message is safe to store (no secrets). */
  complete(request: CompletionRequest): Promise<string>;
}

/** Every model the runtime may call, by its `provider/model` reference. */
export interface ModelRouter {
  complete(ref: string, request: Omit<CompletionRequest, 'model'>): Promise<string>;
}

/** A chat surface replies are delivered to (docs/runtime.md#channels). */
export interface ChatChannel {
  readonly id: string;
  /**
   * Sends `text` to `to`; rejects with a CHANNEL_*, DELIVERY_GAVE_UP or SHUTTING_DOWN error
   * (never holding the bot token) after its own retries.
   */
  send(to: string, text: string, signal?: AbortSignal): Promise<void>;
}
