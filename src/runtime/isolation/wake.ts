import type { Cancel, Clock } from '../../clock.js';

/** One timer for the earliest moment something held back may go (a breaker's probe, the spacing's end). */
export interface Wake {
  /** Fires `ms` from now unless an earlier wake is set; a later or past one is replaced. */
  in(ms: number): void;
  stop(): void;
}

/** Creates the wake, calling `fire` when it is due. */
export function createWake(clock: Clock, fire: () => void): Wake {
  let set: { at: number; cancel: Cancel } | undefined;
  return {
    in(ms) {
      // On the monotonic clock: the system's clock set back neither delays nor repeats a wake.
      const now = clock.monotonic();
      const at = now + ms;
      if (set && set.at <= at && set.at > now) return;
      set?.cancel();
      const cancel = clock.setTimeout(() => {
        set = undefined;
        fire();
      }, Math.ceil(ms));
      set = { at, cancel };
    },
    stop() {
      set?.cancel();
      set = undefined;
    },
  };
}
