import type { Target, TargetLimits } from './targets.js';

/** What a slot is taken for, as the ledger counts it. */
export interface Holder {
  readonly source: string;
  readonly runSlot: boolean;
  /** Its destination's key, or '' for none. */
  readonly key: string;
}

/** How full the slots a holder would take are, for the words of its wait. */
export interface Fill {
  readonly runs: number;
  readonly runSlots: number;
  readonly sourceInFlight: number;
  readonly sourceLimit: number | undefined;
  readonly inFlight: number;
}

/** The slots taken now: run slots, per source and per destination. */
export interface SlotLedger {
  /** True when the run slots and the source's limit have room (always, for a holder without a run slot). */
  fits(holder: Holder): boolean;
  /** True when the destination `key` has room for one more try. */
  roomAt(key: string, target: Target): boolean;
  take(holder: Holder): void;
  give(holder: Holder): void;
  /** Tries in flight to `key`. */
  inFlight(key: string): number;
  fill(holder: Holder): Fill;
  /** A destination's limit. */
  limitOf(target: Target): number;
}

/** Creates an empty ledger over `runSlots`, the destinations' limits and the sources' own. */
export function createSlotLedger(options: {
  readonly runSlots: number;
  readonly limits: TargetLimits;
  readonly sourceLimit?: (source: string) => number | undefined;
}): SlotLedger {
  const byKey = new Map<string, number>();
  const bySource = new Map<string, number>();
  let runs = 0;
  const add = (map: Map<string, number>, key: string, by: number) => map.set(key, (map.get(key) ?? 0) + by);
  const limitOf = (target: Target) =>
    target.kind === 'model' ? options.limits.model(target.id) : options.limits.channel(target.id);

  return {
    fits(holder) {
      if (!holder.runSlot) return true;
      const limit = options.sourceLimit?.(holder.source);
      return runs < options.runSlots && (limit === undefined || (bySource.get(holder.source) ?? 0) < limit);
    },
    roomAt: (key, target) => (byKey.get(key) ?? 0) < limitOf(target),
    take(holder) {
      if (holder.key) add(byKey, holder.key, 1);
      if (!holder.runSlot) return;
      runs++;
      add(bySource, holder.source, 1);
    },
    give(holder) {
      if (holder.key) add(byKey, holder.key, -1);
      if (!holder.runSlot) return;
      runs--;
      add(bySource, holder.source, -1);
    },
    inFlight: (key) => byKey.get(key) ?? 0,
    fill: (holder) => ({
      runs,
      runSlots: options.runSlots,
      sourceInFlight: bySource.get(holder.source) ?? 0,
      sourceLimit: options.sourceLimit?.(holder.source),
      inFlight: byKey.get(holder.key) ?? 0,
    }),
    limitOf,
  };
}
