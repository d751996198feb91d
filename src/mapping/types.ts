import type { ActionFieldValues, ActionKind, ContentSource, WakeMode } from '../action-shape.js';
import type { Action } from '../actions/index.js';
import type { RawHeaders } from '../headers.js';

/** A hook request as the mapping engine sees it. */
export interface HookRequest {
  /** The sub-path after `hooks.path`, slashes trimmed. */
  readonly subPath: string;
  readonly payload: unknown;
  readonly headers: RawHeaders;
  readonly query: Readonly<Record<string, unknown>>;
  /** The request's path and query string. */
  readonly url: string;
  readonly rawBody: Buffer;
  /** True when `payload` is the JSON parse of `rawBody`. */
  readonly payloadIsJsonOfRawBody?: boolean;
  /** Set when the request was authenticated by a signature: only these mappings may take it. */
  readonly verifiedMappings?: ReadonlySet<string>;
}

/** What a transform is called with (docs/mappings.md). */
export interface TransformContext {
  readonly payload: unknown;
  readonly headers: Readonly<Record<string, string>>;
  readonly query: Readonly<Record<string, unknown>>;
  readonly path: string;
  readonly url: string;
  readonly rawBody: string;
  /** A preset's transform: the options of its `hooks.presets` entry, defaults filled in. */
  readonly options?: Readonly<Record<string, unknown>>;
  /** Set when `payload` is `JSON.parse(rawBody)`: the sandbox parses the text itself instead of receiving a copy. */
  readonly payloadIsJsonOfRawBody?: boolean;
}

/** Runs a mapping's transform in the sandbox; rejects with a TRANSFORM_FAILED HookdError. */
export interface TransformRunner {
  /** `budgetMs` caps this call below the per-call limit (what the request has left). */
  run(mappingKey: string, context: TransformContext, budgetMs?: number): Promise<unknown>;
  /** The per-call time limit, which is also one request's budget for all its calls. */
  readonly timeoutMs?: number;
}

/** The outcome of routing a request: nothing matched, the transform skipped it, or actions. */
export type MappingOutcome =
  | { readonly kind: 'none' }
  | {
      readonly kind: 'actions';
      readonly mappingId: string;
      readonly actions: readonly Action[];
      readonly fanOut: boolean;
      /** The request's event type: its transform's, else the one its mapping declares (docs/mappings.md#event-types). */
      readonly eventType?: string;
    };

/**
 * A draft action before validation: template output merged with a transform's result. A
 * template may render any string into an enum field; validation says what was expected.
 */
export type Draft = { kind: ActionKind } & {
  [K in Exclude<keyof ActionFieldValues, 'kind'>]?: ActionFieldValues[K] extends string ? string : ActionFieldValues[K];
};

/** The per-mapping settings that are not part of a draft. */
export interface MappingPolicy {
  readonly wakeMode?: WakeMode;
  readonly allowUnsafeExternalContent: boolean;
  readonly contentSource: ContentSource;
}
