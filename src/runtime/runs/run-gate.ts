import type { Logger } from '../../log.js';
import { LINGER, type StoreContract } from '../../store/index.js';
import type { TryGate } from '../attempts/index.js';
import type { Permit, Target, TrySlots, Wait } from '../isolation/index.js';
import type { PendingRun } from './types.js';

/** A fairness source: a run's mapping, or `agent` for `/hooks/agent`. */
export const sourceOf = (run: { readonly mappingId?: string }): string => run.mappingId ?? 'agent';

const sameTarget = (a: Target | undefined, b: Target) => a !== undefined && a.kind === b.kind && a.id === b.id;

/** A run under way on this node: what stops it, the slot its start was granted, and what it waits for. */
export interface Started {
  readonly run: PendingRun;
  /** Aborted by a cancel (RUN_CANCELLED) or by the run's own signal (shutdown, lease lost). */
  readonly stop: AbortController;
  /** The slot its start took, until its first try uses it. */
  first: Permit | undefined;
  /** Slots held now (a try in flight). */
  holding: number;
  /** Waiting out a back-off: its last try failed and may be tried again (no room taken). */
  resting: boolean;
  wait: Wait | undefined;
  /** A wait was written to the store: cleared when it tries again. */
  storedWait: boolean;
  task: Promise<void>;
}

/** A started run, holding the slot its start was granted; `life` aborts its work too. */
export function startedRun(run: PendingRun, permit: Permit, life: AbortSignal): Started & { unlink(): void } {
  const stop = new AbortController();
  const onLife = () => stop.abort(life.reason);
  if (life.aborted) onLife();
  else life.addEventListener('abort', onLife, { once: true });
  return {
    run,
    stop,
    first: permit,
    holding: 1,
    resting: false,
    wait: undefined,
    storedWait: false,
    task: Promise.resolve(),
    unlink: () => life.removeEventListener('abort', onLife),
  };
}

export interface RunGatesOptions {
  readonly slots: TrySlots;
  readonly store: StoreContract;
  readonly log: Logger;
  readonly onRunUpdate?: ((runId: string) => void) | undefined;
  /** Told when a started run stops holding a slot. */
  readonly freed?: (() => void) | undefined;
}

/** How started runs take their slots (docs/runtime.md#fault-isolation). */
export interface RunGates {
  /** Each try of `s` takes a slot of its source; the first uses the one its start took. */
  gateOf(s: Started): TryGate;
  /** Gives back the slot its start took, when no try used it. */
  unused(s: Started): void;
}

/** Creates the gates of one run queue. */
export function createRunGates(options: RunGatesOptions): RunGates {
  const { slots, store, log } = options;

  /** A permit that counts itself held on `s` until released. */
  function held(s: Started, permit: Permit): Permit {
    let released = false;
    return {
      target: permit.target,
      probe: permit.probe,
      release(outcome, error) {
        if (released) return;
        released = true;
        s.holding--;
        // A failed try is followed by a back-off (or the run's end); any other outcome by work
        // of the run's own (its result written, a delivery), which takes room.
        s.resting = outcome === 'failed';
        permit.release(outcome, error);
        options.freed?.();
      },
    };
  }

  /** Writes a breaker's wait on the run, so that every node shows it (docs/runtime.md#waiting). */
  function storeWait(s: Started, wait: Wait | null): void {
    s.storedWait = wait !== null;
    store.group
      .write((w) => w.runs.recordWait(s.run.id, wait), LINGER)
      .then(
        () => options.onRunUpdate?.(s.run.id),
        (err: unknown) => log.warn({ err, runId: s.run.id }, 'recording a run wait failed'),
      );
  }

  return {
    gateOf(s) {
      const request = { source: sourceOf(s.run), runSlot: true };
      const onWait = (wait: Wait) => {
        s.wait = wait;
        if (wait.until !== undefined) storeWait(s, wait);
      };
      return {
        async acquire(target, signal) {
          s.resting = false;
          const first = s.first;
          s.first = undefined;
          if (first && sameTarget(first.target, target)) return held(s, first);
          if (first) held(s, first).release('cut');
          // Cut off while waiting (its time limit, a cancel), the wait stays: the run's error names it.
          const permit = await slots.acquire({ ...request, target }, signal, onWait);
          s.wait = undefined;
          if (s.storedWait) storeWait(s, null);
          s.holding++;
          return held(s, permit);
        },
      };
    },
    unused(s) {
      if (s.first) held(s, s.first).release('cut');
      s.first = undefined;
    },
  };
}
