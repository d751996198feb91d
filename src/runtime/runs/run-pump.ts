import { systemClock } from '../../clock.js';
import { hookdError } from '../../errors.js';
import type { Logger } from '../../log.js';
import { failureFields, isStoreUnavailable } from '../../store/index.js';
import {
  createTrySlots,
  defaultLimits,
  modelTarget,
  type Permit,
  type Ticket,
  type TrySlots,
} from '../isolation/index.js';
import { createRunExecutor, type RunContext, type RunExecutor } from './run-executor.js';
import { createRunGates, type Started, sourceOf, startedRun } from './run-gate.js';
import { createSessionOrder } from './session-order.js';
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
   * Runs that take this node's room: waiting ones no breaker holds back, and started ones with
   * a try in flight or work of their own between tries (writing a result). A run waiting out a
   * back-off, a breaker or a slot is not counted.
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
  /**
   * Told when an execution of `run` ended, whatever its outcome; `crashed`: it threw (a read or
   * a bug, not an abort), and the run is still unfinished in the store.
   */
  ended?(run: PendingRun, crashed: boolean): void;
  /** Told when a started run stops holding a slot: its try ended, a wait may follow. */
  freed?(): void;
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

/** Runs queued on this node, each with its ticket in the slots. */
interface Pending {
  has(id: string): boolean;
  add(run: PendingRun): void;
  /** Takes a waiting run out of the slots' queue; undefined when it is not waiting. */
  take(id: string): PendingRun | undefined;
  /** Forgets a run its start was granted to. */
  delete(id: string): void;
  waitOf(id: string): string | undefined;
  /** Waiting runs no breaker holds back. */
  free(): number;
  readonly size: number;
  /** Takes every waiting run out. */
  clear(): void;
}

function createPending(
  slots: TrySlots,
  ready: (run: PendingRun) => boolean,
  start: (run: PendingRun, permit: Permit) => void,
): Pending {
  const pending = new Map<string, { readonly run: PendingRun; ticket?: Ticket }>();
  let order = createSessionOrder();
  const waiting = (id: string) => pending.has(id);
  const forget = (id: string) => {
    const entry = pending.get(id);
    if (entry) order.remove(entry.run);
    pending.delete(id);
  };
  return {
    has: (id) => pending.has(id),
    add(run) {
      const entry: { run: PendingRun; ticket?: Ticket } = { run };
      pending.set(run.id, entry);
      order.add(run);
      const target = run.model === undefined ? {} : { target: modelTarget(run.model) };
      const request = {
        source: sourceOf(run),
        ...target,
        runSlot: true,
        start: true,
        ready: () => ready(run) && order.first(run, waiting),
      };
      entry.ticket = slots.enqueue(request, (permit) => start(run, permit));
    },
    take(id) {
      const entry = pending.get(id);
      if (!entry?.ticket?.cancel()) return undefined;
      forget(id);
      return entry.run;
    },
    delete: forget,
    waitOf: (id) => pending.get(id)?.ticket?.wait()?.reason,
    free() {
      let n = 0;
      for (const entry of pending.values()) if (!entry.ticket?.wait()?.breaker) n++;
      return n;
    },
    get size() {
      return pending.size;
    },
    clear() {
      for (const entry of pending.values()) entry.ticket?.cancel();
      pending.clear();
      order = createSessionOrder();
    },
  };
}

/** A started run with a try in flight, or between tries doing work of its own (not waiting). */
const takesRoom = (s: Started): boolean => s.holding > 0 || (!s.resting && s.wait === undefined);

/**
 * Reads a started run and executes it, unless it is over (a run cancelled while it waited to be
 * tried again); an abort ends a write's tries (the run resumes later, or elsewhere). Answers
 * whether it crashed: threw, not by shutdown.
 */
async function executed(
  store: RunQueueOptions['store'],
  executor: RunExecutor,
  runId: string,
  context: RunContext,
  log: Logger,
): Promise<boolean> {
  try {
    const record = await store.runs.get(runId);
    if (record && record.summarizedAt === undefined) await executor.execute(record, context);
    return false;
  } catch (err) {
    if (context.shutdown.aborted) return false;
    // A store out of reach is no crash of the run: its cause, not a stack (the outage is logged once).
    if (isStoreUnavailable(err))
      log.warn({ ...failureFields(err), runId }, 'run interrupted: the store is out of reach; it is tried again');
    else log.error({ err, runId }, 'run crashed');
    return true;
  }
}

/**
 * Ends a run taken out of the queue as cancelled. Its end is told however the cancel went: one
 * that failed (the store) leaves the run unfinished, for its owner to try again (as a crash) or
 * to let go of (a lease).
 */
async function cancelWaiting(executor: RunExecutor, hooks: RunPumpHooks, run: PendingRun): Promise<void> {
  let failed = true;
  try {
    await executor.cancel(run.id, hooks.signalOf(run) ?? new AbortController().signal);
    failed = false;
  } finally {
    hooks.ended?.(run, failed);
  }
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
  const gates = createRunGates({ slots, store, log, onRunUpdate: options.onRunUpdate, freed: hooks.freed });
  const started = new Map<string, Started>();
  const busySessions = new Set<string>();
  const pending = createPending(slots, (run) => !busySessions.has(run.sessionKey), start);
  let stopped = false;

  function start(run: PendingRun, permit: Permit): void {
    pending.delete(run.id);
    const signal = hooks.signalOf(run);
    if (!signal || stopped) {
      permit.release('cut');
      return;
    }
    busySessions.add(run.sessionKey);
    const s = startedRun(run, permit, signal);
    started.set(run.id, s);
    const context: RunContext = {
      signal: s.stop.signal,
      shutdown: signal,
      gate: gates.gateOf(s),
      waiting: () => s.wait?.reason,
    };
    s.task = executed(store, executor, run.id, context, log).then((crashed) => {
      s.unlink();
      gates.unused(s);
      busySessions.delete(run.sessionKey);
      started.delete(run.id);
      hooks.ended?.(run, crashed);
      slots.dispatch();
    });
  }

  return {
    slots,
    add(run) {
      if (!stopped && !pending.has(run.id) && !started.has(run.id)) pending.add(run);
    },
    remove: (id) => pending.take(id) !== undefined,
    pump: () => slots.dispatch(),
    get waiting() {
      return pending.size;
    },
    get executing() {
      return started.size;
    },
    busy: () => pending.free() + [...started.values()].filter(takesRoom).length,
    waitOf: (id) => pending.waitOf(id) ?? started.get(id)?.wait?.reason,
    async cancel(id) {
      const run = pending.take(id);
      if (run) {
        await cancelWaiting(executor, hooks, run);
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
      pending.clear();
      // Its own slots end with it; the runtime's outlive it (the heartbeat's tries).
      if (!options.slots) slots.stop();
      await Promise.allSettled([...started.values()].map((s) => s.task));
    },
  };
}
