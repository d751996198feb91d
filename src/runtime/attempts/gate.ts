import type { Permit, Target } from '../isolation/index.js';

/**
 * How a retry loop takes a slot for each try (docs/runtime.md#fault-isolation): a try holds its
 * permit while in flight, and none while it waits out a back-off.
 */
export interface TryGate {
  /** Waits for a slot to `target`; rejects with `signal`'s reason when it aborts first. */
  acquire(target: Target, signal: AbortSignal): Promise<Permit>;
}

/** A gate that never waits: callers outside the runtime's slots (tests, tools). */
export const OPEN_GATE: TryGate = {
  acquire: (target) => Promise.resolve({ target, probe: false, release: () => undefined }),
};
