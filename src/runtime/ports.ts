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

/** What a delivery is about, for the kinds that send more than its text (docs/channels.md#webhook). */
export interface DeliveryContext {
  /** The run whose reply it is. */
  readonly runId?: string;
  readonly sessionKey?: string;
  /** An alert it is (docs/operations.md#alerts). */
  readonly alert?: {
    readonly id: string;
    readonly kind: string;
    readonly condition: string;
    readonly source: string;
  };
}

/**
 * A configured channel replies are delivered to (docs/channels.md), one per `channels.<id>`. Like
 * a provider, it makes one try per call; the runtime retries.
 */
export interface ChatChannel {
  /** Its id, `channels.<id>`: what `channel` names and errors say. */
  readonly id: string;
  /** The recipient when a delivery names none (`channels.<id>.defaultTo`). */
  readonly defaultTo?: string;
  /** False when its kind sends to one place its config names (an incoming-webhook URL): `to` is optional. */
  readonly needsRecipient?: boolean;
  /** A reply as the messages the service takes, in order (each within its kind's limit). */
  split(text: string): string[];
  /**
   * Sends one message, one try: rejects with CHANNEL_REFUSED with the status (429 and 5xx are
   * retried, after `retryAfterMs` when the service said; `transient` overrides the status's
   * say), CHANNEL_UNREACHABLE (retried) or CHANNEL_UNCONFIRMED, never holding a credential; or
   * anything once `signal` aborted.
   */
  sendMessage(to: string, text: string, signal: AbortSignal): Promise<void>;
  /**
   * This channel for one delivery: its messages carry `context`, and each keeps one id across
   * the retries of that delivery (the webhook kind's message id).
   */
  about?(context: DeliveryContext): ChatChannel;
}
