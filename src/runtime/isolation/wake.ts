import type { Cancel, Clock } from '../../clock.js';

/** One timer for the earliest moment something held back may go (a breaker's probe, the spacing's end). */
export interface Wake {
  /** Fires at `at` (epoch ms) unless an earlier wake is set; a later or past one replaces it. */
  at(at: number): void;
  stop(): void;
}

/** Creates the wake, calling `fire` when it is due. */
export function createWake(clock: Clock, fire: () => void): Wake {
  let set: { at: number; cancel: Cancel } | undefined;
  return {
    at(at) {
      const now = clock.now();
      if (set && set.at <= at && set.at > now) return;
      set?.cancel();
      const cancel = clock.setTimeout(
        () => {
          set = undefined;
          fire();
        },
        Math.ceil(at - now),
      );
      set = { at, cancel };
    },
    stop() {
      set?.cancel();
      set = undefined;
    },
  };
}
