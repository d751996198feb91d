import { type Breaker, type BreakerSnapshot, createBreaker } from './breaker.js';
import { type Target, targetKey } from './targets.js';

/** Breakers kept at most: model references come from requests. Idle ones are dropped past it. */
const MAX_BREAKERS = 1000;

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

/** Creates the registry; `onChange` is told when a breaker opens or closes; `busy` keeps a breaker in use. */
export function createBreakers(
  onChange: (snapshot: BreakerSnapshot) => void,
  busy: (target: Target) => boolean,
): Breakers {
  const breakers = new Map<string, Breaker>();
  const targets = new Map<string, Target>();
  const keys = new WeakMap<Target, string>();
  const keyOf = (target: Target) => {
    let key = keys.get(target);
    if (key === undefined) {
      key = targetKey(target);
      keys.set(target, key);
      if (!targets.has(key)) targets.set(key, target);
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
