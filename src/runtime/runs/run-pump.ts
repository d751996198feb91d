import { systemClock } from '../../clock.js';
import { hookdError } from '../../errors.js';
import type { TryGate } from '../attempts/index.js';
import {
  createTrySlots,
  defaultLimits,
  modelTarget,
  type Permit,
  type Target,
  type Ticket,
  type TrySlots,
  type Wait,
} from '../isolation/index.js';
import { createRunExecutor, type RunContext } from './run-executor.js';
import type { PendingRun, RunQueueOptions } from './types.js';

/** Waiting runs started as slots allow, each read and executed; what both run queues share. */
export interface RunPump {
  /** The slots it starts runs with (the runtime's, or its own). */
  readonly slots: TrySlots;
  /** Queues a run to start once it is its turn (a second add of a run it holds does nothing). */
  add(run: PendingRun): void;
  /** Takes a waiting run out without starting it; false when it is not waiting. */
  remove(id: string): boolean;
  /** Starts what may start now. */
  pump(): void;
  /** Runs added and not started. */
  readonly waiting: number;
  /** Runs started and not ended, trying or waiting between tries. */
  readonly executing: number;
  /**
   * Runs that use this node's slots: waiting ones no breaker holds back, and started ones with
   * a try in flight. A run waiting out a back-off or a breaker is not counted.
   */
  busy(): number;
  /** Why a run it holds is not trying now, if it says. */
  waitOf(id: string): string | undefined;
  /**
   * Ends a run it holds as cancelled (docs/runtime.md#cancel): a waiting one at once, a started
   * one by aborting its work; resolves once it ended, with false when it holds no such run.
   */
  cancel(id: string): Promise<boolean>;
  /** Ends the stored run `id`, which no one executes, as cancelled (unless it is over). */
  cancelStored(id: string, shutdown: AbortSignal): Promise<void>;
  /** Starts no more runs; resolves once the executing ones ended (abort them first). */
  stop(): Promise<void>;
}

export interface RunPumpHooks {
  /** What aborts `run` (the shutdown; on a shared store, also its lease given up); none: not started. */
  signalOf(run: PendingRun): AbortSignal | undefined;
  /** Told when an execution of `run` ended, whatever its outcome. */
  ended?(run: PendingRun): void;
  /** Told when a started run stops holding a slot: its try ended, a wait may follow. */
  freed?(): void;
}

/** A fairness source: a run's mapping, or `agent` for `/hooks/agent`. */
export const sourceOf = (run: { readonly mappingId?: string }): string => run.mappingId ?? 'agent';

const sameTarget = (a: Target | undefined, b: Target) => a !== undefined && a.kind === b.kind && a.id === b.id;

/** A run under way here: what stops it, the slot its start was granted, and what it waits for. */
interface Started {
  readonly run: PendingRun;
  /** Aborted by a cancel (RUN_CANCELLED) or by the run's own signal (shutdown, lease lost). */
  readonly stop: AbortController;
  /** The slot its start took, until its first try uses it. */
  first: Permit | undefined;
  /** Slots held now (a try in flight). */
  holding: number;
  wait: Wait | undefined;
  /** A wait was written to the store: cleared when it tries again. */
  storedWait: boolean;
  task: Promise<void>;
}

/** The slots of a queue made without the runtime's (tests, tools): the queue's own limits. */
function ownSlots(options: RunQueueOptions): TrySlots {
  const limits = options.mappingLimits;
  return createTrySlots({
    runSlots: options.maxConcurrent,
    limits: defaultLimits(options.maxConcurrent),
    clock: options.clock ?? systemClock,
    ...(limits ? { sourceLimit: (source: string) => limits.get(source) } : {}),
    ...(options.spacingMs ? { startSpacingMs: options.spacingMs } : {}),
  });
}

/**
 * Starts runs as the try slots grant them (docs/runtime.md#fault-isolation): a run starts when
 * its first try may go, fairly across sources, runs of one session key strictly one after
 * another. A started run holds a slot only while one of its tries is in flight.
 */
export function createRunPump(options: RunQueueOptions, hooks: RunPumpHooks): RunPump {
  const { store } = options;
  const log = options.log.child({ component: 'runs' });
  const slots = options.slots ?? ownSlots(options);
  const executor = createRunExecutor(options);
  const pending = new Map<string, { readonly run: PendingRun; ticket?: Ticket }>();
  const started = new Map<string, Started>();
  const busySessions = new Set<string>();
  let stopped = false;

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
        permit.release(outcome, error);
        hooks.freed?.();
      },
    };
  }

  /** Writes a breaker's wait on the run, so that every node shows it (docs/runtime.md#waiting). */
  function storeWait(s: Started, wait: Wait | null): void {
    s.storedWait = wait !== null;
    store.group
      .write((w) => w.runs.recordWait(s.run.id, wait))
      .then(
        () => options.onRunUpdate?.(s.run.id),
        (err: unknown) => log.warn({ err, runId: s.run.id }, 'recording a run wait failed'),
      );
  }

  /** Each try of a started run takes a slot of its source; the first uses the one its start took. */
  function gateOf(s: Started): TryGate {
    const request = { source: sourceOf(s.run), runSlot: true };
    return {
      async acquire(target, signal) {
        const first = s.first;
        s.first = undefined;
        if (first && sameTarget(first.target, target)) return held(s, first);
        if (first) held(s, first).release('cut');
        const onWait = (wait: Wait) => {
          s.wait = wait;
          if (wait.until !== undefined) storeWait(s, wait);
        };
        // Cut off while waiting (its time limit, a cancel), the wait stays: the run's error names it.
        const permit = await slots.acquire({ ...request, target }, signal, onWait);
        s.wait = undefined;
        if (s.storedWait) storeWait(s, null);
        s.holding++;
        return held(s, permit);
      },
    };
  }

  function start(run: PendingRun, permit: Permit): void {
    pending.delete(run.id);
    const signal = hooks.signalOf(run);
    if (!signal || stopped) {
      permit.release('cut');
      return;
    }
    busySessions.add(run.sessionKey);
    const stop = new AbortController();
    const onLife = () => stop.abort(signal.reason);
    if (signal.aborted) onLife();
    else signal.addEventListener('abort', onLife, { once: true });
    const s = { run, stop, first: permit, holding: 1, wait: undefined, storedWait: false } as Started;
    started.set(run.id, s);
    const context: RunContext = {
      signal: stop.signal,
      shutdown: signal,
      gate: gateOf(s),
      waiting: () => s.wait?.reason,
    };
    s.task = store.runs
      .get(run.id)
      .then((record) => record && executor.execute(record, context))
      .catch((err: unknown) => {
        // An abort ends a write's tries: the run resumes at the next start, or on another node.
        if (!signal.aborted) log.error({ err, runId: run.id }, 'run crashed');
      })
      .finally(() => {
        signal.removeEventListener('abort', onLife);
        if (s.first) held(s, s.first).release('cut');
        busySessions.delete(run.sessionKey);
        started.delete(run.id);
        hooks.ended?.(run);
        slots.dispatch();
      });
  }

  return {
    slots,
    add(run) {
      if (stopped || pending.has(run.id) || started.has(run.id)) return;
      const entry: { run: PendingRun; ticket?: Ticket } = { run };
      pending.set(run.id, entry);
      const target = run.model === undefined ? {} : { target: modelTarget(run.model) };
      const ready = () => !busySessions.has(run.sessionKey);
      entry.ticket = slots.enqueue({ source: sourceOf(run), ...target, runSlot: true, start: true, ready }, (permit) =>
        start(run, permit),
      );
    },
    remove(id) {
      const entry = pending.get(id);
      if (!entry?.ticket?.cancel()) return false;
      pending.delete(id);
      return true;
    },
    pump: () => slots.dispatch(),
    get waiting() {
      return pending.size;
    },
    get executing() {
      return started.size;
    },
    busy() {
      let n = 0;
      for (const entry of pending.values()) if (!entry.ticket?.wait()?.breaker) n++;
      for (const s of started.values()) if (s.holding > 0) n++;
      return n;
    },
    waitOf: (id) => pending.get(id)?.ticket?.wait()?.reason ?? started.get(id)?.wait?.reason,
    async cancel(id) {
      const entry = pending.get(id);
      if (entry?.ticket?.cancel()) {
        pending.delete(id);
        await executor.cancel(id, hooks.signalOf(entry.run) ?? new AbortController().signal);
        hooks.ended?.(entry.run);
        return true;
      }
      const s = started.get(id);
      if (!s) return false;
      s.stop.abort(hookdError('RUN_CANCELLED'));
      await s.task;
      return true;
    },
    cancelStored: (id, shutdown) => executor.cancel(id, shutdown),
    async stop() {
      stopped = true;
      for (const entry of pending.values()) entry.ticket?.cancel();
      pending.clear();
      // Its own slots end with it; the runtime's outlive it (the heartbeat's tries).
      if (!options.slots) slots.stop();
      await Promise.allSettled([...started.values()].map((s) => s.task));
    },
  };
}
