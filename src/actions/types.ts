/** Wake and agent actions: what every hook request becomes before it is stored. */

export const WAKE_MODES = ['now', 'next-heartbeat'] as const;
export type WakeMode = (typeof WAKE_MODES)[number];

export const THINKING_LEVELS = ['off', 'minimal', 'low', 'medium', 'high', 'xhigh'] as const;
export type ThinkingLevel = (typeof THINKING_LEVELS)[number];

export const CHANNELS = ['last', 'chatnet'] as const;
export type Channel = (typeof CHANNELS)[number];

/** The `Source:` line of the external-content safety wrapper (DESIGN §9). */
export type ContentSource = 'webhook' | 'email';

/** Queue a system event for the main session (seed §4.1). */
export interface WakeAction {
  readonly kind: 'wake';
  readonly text: string;
  readonly mode: WakeMode;
  /** True only for mappings with `allowUnsafeExternalContent`. */
  readonly allowUnsafeExternalContent: boolean;
  readonly contentSource: ContentSource;
}

/** Run an isolated agent turn (seed §4.2). */
export interface AgentAction {
  readonly kind: 'agent';
  readonly message: string;
  readonly name?: string;
  readonly sessionKey: string;
  readonly wakeMode: WakeMode;
  readonly deliver: boolean;
  readonly channel: Channel;
  readonly to?: string;
  /** The resolved `provider/model` in force for this run. */
  readonly model: string;
  readonly thinking?: ThinkingLevel;
  /** Whole seconds. */
  readonly timeoutSeconds?: number;
  readonly allowUnsafeExternalContent: boolean;
  readonly contentSource: ContentSource;
  /** The mapping that made it (for per-mapping concurrency); absent for /hooks/agent. */
  readonly mappingId?: string;
}

export type Action = WakeAction | AgentAction;

/** What the sink answers for each accepted action. */
export type Accepted =
  | { readonly kind: 'wake'; readonly eventId: string; readonly mode: WakeMode }
  | { readonly kind: 'agent'; readonly runId: string; readonly sessionKey: string };

export interface AcceptContext {
  readonly requestId: string;
  /** Remember this request's answer under its idempotency key, in the same commit as its actions. */
  readonly idempotency?: IdempotencyIntent;
}

/** What an idempotent request's answer is stored under (DESIGN §10). */
export interface IdempotencyIntent {
  readonly scope: string;
  readonly key: string;
  readonly bodyHash: string;
  /** Builds the answer from what was accepted: status and JSON body (null for 204). */
  readonly respond: (accepted: readonly Accepted[]) => { readonly status: number; readonly body: unknown };
}

/** A remembered answer. */
export interface IdempotentAnswer {
  readonly bodyHash: string;
  readonly status: number;
  readonly body: unknown;
}

/**
 * The port between HTTP and the runtime: `accept` commits every action durably (all or
 * none) before it resolves, so that a 2xx is only ever sent for what is stored.
 */
export interface ActionSink {
  accept(actions: readonly Action[], context: AcceptContext): Promise<readonly Accepted[]>;
  /** Keeps a request answered 5xx (a failed transform) so that it can be replayed later. */
  recordFailure(failure: FailedRequest): void;
  /** The live remembered answer for an idempotency key, if any. */
  findAnswer(scope: string, key: string): IdempotentAnswer | undefined;
}

/** A hook request that failed on our side, as kept for replay (no credentials). */
export interface FailedRequest {
  readonly requestId: string;
  readonly subPath: string;
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
  readonly code: string;
  readonly error: string;
}
