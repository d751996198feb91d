import { type Breaker, type BreakerSnapshot, createBreaker } from './breaker.js';
import { type Target, targetKey } from './targets.js';

/** Breakers kept at most: model references come from requests. Idle ones are dropped past it. */
const MAX_BREAKERS = 1000;
/** Destinations known by key at most: past it, those without a breaker and not in use are forgotten. */
export const MAX_TARGETS = 2000;

/** The breakers of one gateway, by destination, and the destinations by key. */
export interface Breakers {
  /** A destination's key, made once per destination object. */
  keyOf(target: Target): string;
  /** The breaker of `target`, made (closed) when missing; `target` is known by its key from then on. */
  of(target: Target): Breaker;
  /** The destination of `key`, once known. */
  targetOf(key: string): Target | undefined;
  /** The breaker of `target`, if it has one. */
  find(target: Target): Breaker | undefined;
  /** Every breaker, with its key. */
  entries(): IterableIterator<[string, Breaker]>;
}

/**
 * Creates the registry; `onChange` is told when a breaker opens or closes; `busy` keeps a breaker,
 * and a destination's key, in use (a try in flight to it, or one waiting for it).
 */
export function createBreakers(
  onChange: (snapshot: BreakerSnapshot) => void,
  busy: (target: Target) => boolean,
): Breakers {
  const breakers = new Map<string, Breaker>();
  const targets = new Map<string, Target>();
  const keys = new WeakMap<Target, string>();
  let forgetAt = MAX_TARGETS;
  const keyOf = (target: Target) => {
    let key = keys.get(target);
    if (key === undefined) {
      key = targetKey(target);
      keys.set(target, key);
    }
    if (!targets.has(key)) {
      // A request may name any model: the destinations it made and left are not kept for good.
      // The next look is twice as far as what stayed (all in use: no look per new key).
      if (targets.size >= forgetAt) {
        for (const [k, t] of targets) if (!breakers.has(k) && !busy(t)) targets.delete(k);
        forgetAt = Math.max(MAX_TARGETS, 2 * targets.size);
      }
      targets.set(key, target);
    }
    return key;
  };
  return {
    keyOf,
    of(target) {
      const key = keyOf(target);
      let breaker = breakers.get(key);
      if (breaker) return breaker;
      if (breakers.size >= MAX_BREAKERS)
        for (const [k, b] of breakers) if (b.idle && !busy(targets.get(k) as Target)) breakers.delete(k);
      breaker = createBreaker(target.kind, target.id, (b, now) => onChange(b.snapshot(now)));
      breakers.set(key, breaker);
      return breaker;
    },
    targetOf: (key) => targets.get(key),
    find: (target) => breakers.get(keyOf(target)),
    entries: () => breakers.entries(),
  };
}
