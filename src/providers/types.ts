import type { ThinkingLevel } from '../actions/index.js';

export interface ChatMessage {
  readonly role: 'system' | 'user' | 'assistant';
  readonly content: string;
}

export interface CompletionRequest {
  /** The model name, without the `provider/` prefix. */
  readonly model: string;
  readonly messages: readonly ChatMessage[];
  readonly thinking?: ThinkingLevel;
  /** Aborts the call (the run's timeout). */
  readonly signal: AbortSignal;
}

/** A model backend (DESIGN §7). */
export interface ModelProvider {
  complete(request: CompletionRequest): Promise<string>;
}

/** A provider's failure, with a message that is safe to store and show (no secrets). */
export class ProviderError extends Error {
  constructor(
    message: string,
    readonly retryable = false,
  ) {
    super(message);
    this.name = 'ProviderError';
  }
}
