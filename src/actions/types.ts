/** Wake and agent actions: what every hook request becomes before it is stored. */

import type { ActionFieldValues, ContentSource, WakeMode } from '../action-shape.js';
import type { CredentialMark } from '../headers.js';
import type { RequestView } from '../views.js';

/** What every stored action carries besides its own fields. */
interface ActionPolicy {
  /** True only for mappings with `allowUnsafeExternalContent` (no safety wrapper). */
  readonly allowUnsafeExternalContent: boolean;
  readonly contentSource: ContentSource;
}

type Fields<K extends keyof ActionFieldValues> = Readonly<Pick<ActionFieldValues, K>>;
type OptionalFields<K extends keyof ActionFieldValues> = Readonly<Partial<Pick<ActionFieldValues, K>>>;

/** Queue a system event for the main session (docs/runtime.md#wake--main-session--heartbeat). */
export interface WakeAction extends Fields<'text' | 'mode'>, ActionPolicy {
  readonly kind: 'wake';
}

/**
 * Run an isolated agent turn (docs/runtime.md#agent-runs): `model` is the resolved `provider/model` in force,
 * `timeoutSeconds` whole seconds.
 */
export interface AgentAction
  extends Fields<'message' | 'sessionKey' | 'wakeMode' | 'deliver' | 'channel' | 'model'>,
    OptionalFields<'name' | 'to' | 'thinking' | 'timeoutSeconds'>,
    ActionPolicy {
  readonly kind: 'agent';
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
  /** The request's log record, written in the same commit as its actions (docs/runtime.md#request-log-and-replay). */
  readonly record?: (accepted: readonly Accepted[]) => RequestLogRecord;
  /** Remember this request's answer under its idempotency key, in the same commit as its actions. */
  readonly idempotency?: IdempotencyIntent;
}

/** What an idempotent request's answer is stored under (docs/operations.md#idempotency). */
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
  /** The live remembered answer for an idempotency key, if any (async: a shared store is a round trip away). */
  findAnswer(scope: string, key: string): Promise<IdempotentAnswer | undefined>;
  /** Logs an authenticated request that stored no actions (a 4xx, a failure, a 204), in the next group commit. */
  recordRequest(record: RequestLogRecord): void;
  /**
   * Logs requests refused at the door in a commit of their own, never the accepts' group commit:
   * they are not part of the durability promise and may be lost in a crash.
   */
  recordRefused(records: readonly RequestLogRecord[]): void;
  /** A logged request and, when it failed on our side, its whole body kept for replay. */
  findRequest(id: string): Promise<StoredRequest | undefined>;
  /** Marks a request replayed (its record, and its kept failure: no longer pending). */
  markReplayed(id: string): void;
}

/** A logged request, as a replay reads it: its record, its kept failure, or both. */
export interface StoredRequest {
  readonly record?: RequestLogRecord;
  /** The failure kept with the whole body, when the request failed on our side. */
  readonly failure?: FailedRequest & { readonly id: string };
}

/**
 * One hook request as the request log keeps it (docs/runtime.md#request-log-and-replay): an
 * authenticated one, or one refused at the door (without its body).
 */
export interface RequestLogRecord extends Omit<RequestView, 'receivedAt' | 'replayedAt' | 'outcome'> {
  /** When it arrived (epoch milliseconds). A sender may reuse an id: the newest record wins a lookup. */
  readonly receivedAt: number;
  /** Every header; a credential's value is `[masked]`. */
  readonly headers: Readonly<Record<string, string>>;
  /** The credential headers it carried, by name, and whether each one's check passed. */
  readonly credentials: Readonly<Record<string, CredentialMark>>;
  /** The raw body, cut at `hooks.log.maxBodyBytes`, redacted paths masked; empty when not kept. */
  readonly body: Buffer;
  /** How it was let in; absent when it never was (a request refused at the door). */
  readonly receipt?: RequestReceipt;
}

/**
 * How an authenticated hook request was let in, kept with its record and its kept failure: what a
 * replay of it may do (docs/runtime.md#request-log-and-replay). Never a credential or a proof of
 * one: the credentials are named by fingerprints (HMACs keyed by the gateway token).
 */
export type RequestReceipt = RequestOpening & ReceiptFacts;

/** The credential that let a hook request in. */
export type RequestOpening =
  | {
      /** The hook token, presented there. */
      readonly by: 'token';
      readonly via: 'bearer' | 'header' | 'query';
      /** The fingerprint of the hook token that opened it. */
      readonly credential: string;
    }
  | {
      /** A signature: of each mapping id, the fingerprint of the `verify` it held for. */
      readonly by: 'signature';
      readonly credentials: Readonly<Record<string, string>>;
    };

/** What a receipt tells besides the credentials. */
export interface ReceiptFacts {
  /** False when it was refused before its body was read (a 413, 415, 408, invalid JSON): nothing to replay. */
  readonly bodyRead: boolean;
  /** The sender's delivery id a valid signature gave (its idempotency key when it named none). */
  readonly webhookId?: string;
  /** On a replay's record: the key it was replayed under when the request named none (the first one's id). */
  readonly replayKey?: string;
}

/** A hook request that failed on our side, as kept for replay (credentials masked). */
export interface FailedRequest {
  readonly requestId: string;
  readonly subPath: string;
  readonly url: string;
  readonly client?: string;
  /** Every header; a credential's value is `[masked]`. */
  readonly headers: Readonly<Record<string, string>>;
  readonly credentials: Readonly<Record<string, CredentialMark>>;
  /** The whole body, `hooks.log.redact` paths masked (then `redacted`: no longer the body as received). */
  readonly body: Buffer;
  readonly redacted: boolean;
  readonly code: string;
  readonly error: string;
  /** How it was let in (the request log may be off, or pruned first). */
  readonly receipt?: RequestReceipt;
}
