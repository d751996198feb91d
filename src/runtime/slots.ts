import type { Clock } from '../clock.js';
import type { Logger } from '../log.js';
import type { TryGate } from './attempts/index.js';
import {
  type BreakerSnapshot,
  createTrySlots,
  defaultLimits,
  type TargetLimits,
  type TrySlots,
} from './isolation/index.js';

export interface RuntimeSlotsOptions {
  /** `agents.defaults.maxConcurrentRuns`. */
  readonly runSlots: number;
  /** Per-provider and per-channel limits; default: each one fewer than the run slots (`defaultLimits`). */
  readonly limits?: TargetLimits;
  /** Run slots a mapping may hold at once (its `maxConcurrent`), by mapping id. */
  readonly mappingLimits?: ReadonlyMap<string, number>;
  /** The least time between two run starts right now (ingress pressure). */
  readonly startSpacingMs: () => number;
  readonly clock: Clock;
  readonly log: Logger;
  /** Told when a breaker opens or closes (alerts). */
  readonly onBreaker?: (snapshot: BreakerSnapshot) => void;
}

/** The gateway's try slots, and the gate the main session's heartbeat takes its slots through. */
export interface RuntimeSlots {
  readonly slots: TrySlots;
  /** The heartbeat's tries: its model's and channel's slots and breakers, never a run slot. */
  readonly heartbeatGate: TryGate;
  /** A run's tries outside its execution (a redelivery): a run slot of its source. */
  gateOf(source: string): TryGate;
}

/** Creates the slots of one gateway (docs/runtime.md#fault-isolation); breakers log as they open and close. */
export function createRuntimeSlots(options: RuntimeSlotsOptions): RuntimeSlots {
  const log = options.log.child({ component: 'breakers' });
  const mappings = options.mappingLimits;
  const slots = createTrySlots({
    runSlots: options.runSlots,
    limits: options.limits ?? defaultLimits(options.runSlots),
    clock: options.clock,
    startSpacingMs: options.startSpacingMs,
    ...(mappings ? { sourceLimit: (source: string) => mappings.get(source) } : {}),
    onBreaker(snapshot) {
      const { target, kind, failures, lastError } = snapshot;
      if (snapshot.state === 'closed') log.info({ target, kind }, 'breaker closed');
      else {
        const openUntil = snapshot.openUntil === undefined ? undefined : new Date(snapshot.openUntil).toISOString();
        log.warn({ target, kind, failures, lastError, openUntil }, 'breaker opened');
      }
      options.onBreaker?.(snapshot);
    },
  });
  const gateOf = (source: string, runSlot: boolean): TryGate => ({
    acquire: (target, signal) => slots.acquire({ source, target, runSlot }, signal),
  });
  return { slots, heartbeatGate: gateOf('heartbeat', false), gateOf: (source) => gateOf(source, true) };
}
