import type { AlertCondition } from '../../alert-views.js';

/** How a request a mapping took was answered, as the hook routes tell it. */
export interface MappingAnswer {
  readonly status: number;
  /** The error code it was answered with. */
  readonly code?: string;
  /** For a transform that threw: its author's `file:line:column`. */
  readonly where?: string;
  /** Set when the request log holds the request (its console page). */
  readonly requestId?: string;
}

/**
 * What the hook routes tell the runtime of their answers, for alerts (docs/operations.md#alerts).
 * The HTTP layer sees only this type, like the ActionSink; each call is cheap and never throws.
 */
export interface HookOutcomes {
  /** A request mapping `mappingId` took was answered. */
  answered(mappingId: string, answer: MappingAnswer): void;
  /** A request's signature for `mappingId` did not hold; `reason` is hookd's own words, never a signature. */
  signatureRefused(mappingId: string, reason: string): void;
  /** A request's signature for `mappingId` held. */
  signatureHeld(mappingId: string): void;
}

/** The settings of `hooks.alerts`, parsed. */
export interface AlertSettings {
  /** The channel alerts go through: `hooks.alerts.channel`, as the config settled it. */
  readonly channel: string;
  /** The recipient: `hooks.alerts.to`, else the channel's `defaultTo` (`''` for a kind that needs none). */
  readonly to: string;
  /** The least time between two firings of one condition and source. */
  readonly everyMs: number;
  /** The conditions turned on, with their thresholds. */
  readonly conditions: ReadonlyMap<AlertCondition, { readonly count: number; readonly windowMs: number }>;
  /**
   * The source of a model's alert: the model when the config names it, else its provider's
   * `provider/*` (a sender may name any model: its alerts would be without bound).
   */
  readonly modelSource: (ref: string) => string;
}
