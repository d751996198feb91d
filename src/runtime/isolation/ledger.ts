import type { Target, TargetLimits } from './targets.js';

/** What a slot is taken for, as the ledger counts it. */
export interface Holder {
  readonly source: string;
  readonly runSlot: boolean;
  readonly target: Target | undefined;
}

/** How full the slots a holder would take are, for the words of its wait. */
export interface Fill {
  readonly runs: number;
  readonly runSlots: number;
  readonly sourceInFlight: number;
  readonly sourceLimit: number | undefined;
  /** Tries in flight to its destination's limit group: its provider's models, or its channel. */
  readonly inFlight: number;
}

/** The slots taken now: run slots, per source and per provider or channel. */
export interface SlotLedger {
  /** True when the run slots and the source's limit have room (always, for a holder without a run slot). */
  fits(holder: Holder): boolean;
  /** True when `target`'s provider (a model) or channel has room for one more try. */
  roomFor(target: Target): boolean;
  take(holder: Holder): void;
  give(holder: Holder): void;
  /** Tries in flight to `target`'s provider or channel. */
  inFlightTo(target: Target): number;
  fill(holder: Holder): Fill;
  /** The limit of `target`'s provider or channel. */
  limitOf(target: Target): number;
}

/** The provider of a model reference (`openai` of `openai/gpt-4o`). */
export const providerOf = (ref: string): string => ref.slice(0, Math.max(0, ref.indexOf('/'))) || ref;

/** Creates an empty ledger over `runSlots`, the providers' and channels' limits and the sources' own. */
export function createSlotLedger(options: {
  readonly runSlots: number;
  readonly limits: TargetLimits;
  readonly sourceLimit?: (source: string) => number | undefined;
}): SlotLedger {
  const byGroup = new Map<string, number>();
  const bySource = new Map<string, number>();
  const groups = new WeakMap<Target, string>();
  let runs = 0;
  const add = (map: Map<string, number>, key: string, by: number) => map.set(key, (map.get(key) ?? 0) + by);
  /** The key its limit is counted under: one per provider, one per channel. */
  const groupOf = (target: Target) => {
    let group = groups.get(target);
    if (group === undefined) {
      group = target.kind === 'model' ? `provider:${providerOf(target.id)}` : `channel:${target.id}`;
      groups.set(target, group);
    }
    return group;
  };
  const limitOf = (target: Target) =>
    target.kind === 'model' ? options.limits.provider(providerOf(target.id)) : options.limits.channel(target.id);
  const inFlightTo = (target: Target) => byGroup.get(groupOf(target)) ?? 0;

  return {
    fits(holder) {
      if (!holder.runSlot) return true;
      const limit = options.sourceLimit?.(holder.source);
      return runs < options.runSlots && (limit === undefined || (bySource.get(holder.source) ?? 0) < limit);
    },
    roomFor: (target) => inFlightTo(target) < limitOf(target),
    take(holder) {
      if (holder.target) add(byGroup, groupOf(holder.target), 1);
      if (!holder.runSlot) return;
      runs++;
      add(bySource, holder.source, 1);
    },
    give(holder) {
      if (holder.target) add(byGroup, groupOf(holder.target), -1);
      if (!holder.runSlot) return;
      runs--;
      add(bySource, holder.source, -1);
    },
    inFlightTo,
    fill: (holder) => ({
      runs,
      runSlots: options.runSlots,
      sourceInFlight: bySource.get(holder.source) ?? 0,
      sourceLimit: options.sourceLimit?.(holder.source),
      inFlight: holder.target ? inFlightTo(holder.target) : 0,
    }),
    limitOf,
  };
}
