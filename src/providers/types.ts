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
  /** Resolves with the reply; rejects with a MODEL_* error whose message is safe to store (no secrets). */
  complete(request: CompletionRequest): Promise<string>;
}
