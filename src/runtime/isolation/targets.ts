import type { BreakerView, TargetKind } from '../../views.js';
import type { BreakerSnapshot } from './breaker.js';

/** A destination tries go to: a model (`provider/model`) or a channel (its id). */
export interface Target {
  readonly kind: TargetKind;
  readonly id: string;
}

/**
 * Tries in flight at once (docs/runtime.md#fault-isolation): per provider, whatever its models
 * (`models.providers.<name>.maxConcurrent`), and per channel (`channels.<id>.maxConcurrent`).
 */
export interface TargetLimits {
  /** Calls at once to the provider `name` (`openai` of `openai/gpt-4o`). */
  provider(name: string): number;
  /** Deliveries at once through the channel `id`. */
  channel(id: string): number;
}

/**
 * The limits when nothing is configured: a provider and a channel one fewer than the run slots
 * (at least 1), so that a model server or chat API that takes tries and never answers leaves a
 * slot to the other destinations.
 */
export function defaultLimits(maxConcurrentRuns: number): TargetLimits {
  const share = Math.max(1, maxConcurrentRuns - 1);
  return { provider: () => share, channel: () => share };
}

/** The map key of a destination (a model reference and a channel id never meet). */
export const targetKey = (target: Target): string => `${target.kind}:${target.id}`;

/** Destinations made so far, one object each, by kind then id: a run's way in builds no key of its own. */
const made: Record<TargetKind, Map<string, Target>> = { model: new Map(), channel: new Map() };
/** Past this many of a kind (model references come from requests), they are made afresh. */
const MAX_MADE = 1000;

function targetOf(kind: TargetKind, id: string): Target {
  const known = made[kind].get(id);
  if (known) return known;
  const target: Target = { kind, id };
  if (made[kind].size < MAX_MADE) made[kind].set(id, target);
  return target;
}

/** The destination of a model call. */
export const modelTarget = (ref: string): Target => targetOf('model', ref);

/** The destination of a delivery. */
export const channelTarget = (id: string): Target => targetOf('channel', id);

/** Breakers as the admin API and `/healthz` show them: times as ISO strings. */
export function breakerViews(snapshots: readonly (BreakerSnapshot & { readonly waiting: number })[]): BreakerView[] {
  return snapshots.map((b) => ({
    target: b.target,
    kind: b.kind,
    state: b.state,
    failures: b.failures,
    ...(b.openUntil === undefined ? {} : { openUntil: new Date(b.openUntil).toISOString() }),
    ...(b.lastError === undefined ? {} : { lastError: b.lastError }),
    waiting: b.waiting,
  }));
}
