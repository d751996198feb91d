import { type Clock, type Stamp, stampOf } from '../../clock.js';
import type { BreakerSnapshot, TryOutcome } from './breaker.js';
import { type Breakers, createBreakers } from './breakers.js';
import { type Admission, createFairQueue, type FairQueue, type Queued as QueuedEntry } from './fair-queue.js';
import { createSlotLedger, type Holder, type SlotLedger } from './ledger.js';
import { type Target, type TargetLimits, targetKey } from './targets.js';
import { waitText } from './wait-text.js';
import { createWake } from './wake.js';

/** What wants a slot: whose it is (for fairness), where it goes, and whether it takes a run slot. */
export interface SlotRequest {
  /** A mapping's id, `agent` for `/hooks/agent`, `heartbeat` for the main session's turns. */
  readonly source: string;
  /** Its destination; none for a run that starts past its model call (it asks again per try). */
  readonly target?: Target;
  /** True for a run's tries: they count against `agents.defaults.maxConcurrentRuns`. */
  readonly runSlot: boolean;
}

/** A slot held for one try: released with how the try ended, which its breaker counts. */
export interface Permit {
  readonly target: Target | undefined;
  /** True when this try is the probe of a half-open breaker. */
  readonly probe: boolean;
  /** Frees the slot (once; later calls do nothing); `error` says how a failed try failed. */
  release(outcome: TryOutcome, error?: string): void;
}

/** Why something waits, and until when when that is known (an open breaker). */
export interface Wait {
  readonly reason: string;
  readonly until?: number;
  /** True when its destination's breaker holds it (open, or half-open with its probe under way). */
  readonly breaker?: true;
}

/** A queued request: take it back out, or ask why it still waits. */
export interface Ticket {
  /** Takes it out of the queue; false when it was granted already (or taken out). */
  cancel(): boolean;
  /** Why it waits right now; undefined once granted. */
  wait(): Wait | undefined;
}

export interface TrySlotsOptions {
  /** Run slots: tries of runs in flight at once (`agents.defaults.maxConcurrentRuns`). */
  readonly runSlots: number;
  /** Tries in flight at once per destination. */
  readonly limits: TargetLimits;
  /** Run slots a source may hold at once (a mapping's `maxConcurrent`); none: no limit of its own. */
  readonly sourceLimit?: (source: string) => number | undefined;
  /** The least time between two run starts right now (ingress pressure); default 0. */
  readonly startSpacingMs?: () => number;
  readonly clock: Clock;
  /** Told when a breaker opens or closes. */
  readonly onBreaker?: (snapshot: BreakerSnapshot) => void;
}

/**
 * The slots tries take (docs/runtime.md#fault-isolation): a try in flight holds one, a wait
 * between tries holds none. Requests queue fairly per source; a request is granted when its
 * destination's breaker admits it and the run slots, its destination's slots and its source's
 * limit have room.
 */
export interface TrySlots {
  /** Queues `request`; `grant` is called with the permit once it is its turn (maybe at once). */
  enqueue(
    request: SlotRequest & { readonly start?: boolean; readonly ready?: () => boolean },
    grant: (permit: Permit) => void,
  ): Ticket;
  /** Waits for a permit; rejects with `signal`'s reason when it aborts first. `onWait` is told why, when it must wait. */
  acquire(request: SlotRequest, signal: AbortSignal, onWait?: (wait: Wait) => void): Promise<Permit>;
  /** Grants what may go now (after something outside changed: a session freed). */
  dispatch(): void;
  /** Every breaker known, with how many wait for its destination. */
  breakers(): (BreakerSnapshot & { readonly waiting: number })[];
  /** The breaker of `target`, when it has one. */
  breakerOf(target: Target): BreakerSnapshot | undefined;
  /** Grants nothing more; timers stop. */
  stop(): void;
}

type Request = SlotRequest & { readonly start?: boolean; readonly ready?: () => boolean };

/** What a queued request asks of its slots. */
interface Owner {
  remove(entry: Queued): boolean;
  why(entry: Queued): Wait;
}

/** A request in the queue, and its own ticket: one object per request, on a run's way in. */
class Queued implements QueuedEntry, Ticket, Holder {
  readonly source: string;
  readonly target: Target | undefined;
  readonly start: boolean;
  readonly runSlot: boolean;
  readonly ready: (() => boolean) | undefined;
  queued = false;
  constructor(
    readonly seq: number,
    readonly request: Request,
    readonly key: string,
    readonly grant: (permit: Permit) => void,
    private readonly owner: Owner,
  ) {
    this.source = request.source;
    this.target = request.target;
    this.start = request.start ?? false;
    this.runSlot = request.runSlot;
    this.ready = request.ready;
  }
  cancel(): boolean {
    return this.owner.remove(this);
  }
  wait(): Wait | undefined {
    return this.queued ? this.owner.why(this) : undefined;
  }
}

/** Which queued requests may go now: their destination's room and breaker, the run slots, the spacing. */
function admissionOf(
  ledger: SlotLedger,
  breakers: Breakers,
  clock: Clock,
  spacingLeft: () => number,
): Admission<Queued> {
  return {
    target(key) {
      const target = breakers.targetOf(key) as Target;
      return ledger.roomFor(target) && breakers.of(target).admits(stampOf(clock));
    },
    slots: (entry) => ledger.fits(entry),
    starts: () => spacingLeft() <= 0,
  };
}

/** The permit of `entry`'s try: its slots taken now, given back once with the try's outcome for its breaker. */
function permitOf(entry: Queued, ledger: SlotLedger, breakers: Breakers, clock: Clock, freed: () => void): Permit {
  const target = entry.request.target;
  const probe = target ? breakers.of(target).begin(stampOf(clock)) : false;
  ledger.take(entry);
  let released = false;
  return {
    target,
    probe,
    release(outcome, error) {
      if (released) return;
      released = true;
      ledger.give(entry);
      if (target) breakers.of(target).end(outcome, probe, stampOf(clock), error);
      freed();
    },
  };
}

/** Why `entry` waits at `now`: the first thing that holds it back. */
function waitOf(entry: Queued, ledger: SlotLedger, breakers: Breakers, now: Stamp): Wait {
  const target = entry.request.target;
  const breaker = target && breakers.of(target);
  return waitText({
    ...ledger.fill(entry),
    ...(target ? { target, limit: ledger.limitOf(target) } : {}),
    ...(breaker ? { breaker: breaker.snapshot(now) } : {}),
    runSlot: entry.runSlot,
    source: entry.source,
    ready: entry.ready?.() ?? true,
  });
}

/** How long until something queued may go by itself: a breaker's probe, or the spacing's end. */
function nextWake(breakers: Breakers, queue: FairQueue<Queued>, now: Stamp, spacingLeft: number): number {
  let inMs = Number.POSITIVE_INFINITY;
  for (const [key, breaker] of breakers.entries()) {
    const left = breaker.openFor(now);
    if (left !== undefined && left > 0 && queue.waitingFor(key) > 0) inMs = Math.min(inMs, left);
  }
  return spacingLeft > 0 ? Math.min(inMs, spacingLeft) : inMs;
}

/** Waits for a permit of `slots`, taking the request out when `signal` aborts first. */
function acquireFrom(
  slots: Pick<TrySlots, 'enqueue'>,
  request: SlotRequest,
  signal: AbortSignal,
  onWait?: (wait: Wait) => void,
): Promise<Permit> {
  return new Promise<Permit>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      if (ticket.cancel()) reject(signal.reason);
    };
    const ticket = slots.enqueue(request, (permit) => {
      signal.removeEventListener('abort', onAbort);
      resolve(permit);
    });
    const wait = ticket.wait();
    if (!wait) return;
    signal.addEventListener('abort', onAbort, { once: true });
    onWait?.(wait);
  });
}

/** Creates the slots of one gateway. */
export function createTrySlots(options: TrySlotsOptions): TrySlots {
  const { clock } = options;
  const queue = createFairQueue<Queued>();
  const ledger = createSlotLedger(options);
  const breakers = createBreakers(
    (snapshot) => options.onBreaker?.(snapshot),
    (target) => ledger.inFlightTo(target) > 0 || queue.waitingFor(targetKey(target)) > 0,
  );
  const wake = createWake(clock, () => dispatch());
  let seq = 0;
  let lastStart = Number.NEGATIVE_INFINITY;
  let stopped = false;
  let dispatching = false;
  let again = false;
  let scheduled = false;
  // The spacing is this process's own pacing: the monotonic clock's, which setting the system's
  // clock never moves.
  const spacingLeft = () => lastStart + (options.startSpacingMs?.() ?? 0) - clock.monotonic();
  const admission = admissionOf(ledger, breakers, clock, spacingLeft);
  const owner: Owner = {
    remove(entry) {
      if (!queue.remove(entry)) return false;
      dispatch();
      return true;
    },
    why: (entry) => waitOf(entry, ledger, breakers, stampOf(clock)),
  };

  function dispatch(): void {
    if (dispatching) {
      again = true;
      return;
    }
    dispatching = true;
    try {
      do {
        again = false;
        for (let entry = queue.next(admission); entry && !stopped; entry = queue.next(admission)) {
          queue.take(entry);
          if (entry.start) lastStart = clock.monotonic();
          entry.grant(permitOf(entry, ledger, breakers, clock, dispatch));
        }
      } while (again && !stopped);
    } finally {
      dispatching = false;
    }
    const inMs = !stopped && queue.size > 0 ? nextWake(breakers, queue, stampOf(clock), spacingLeft()) : Infinity;
    if (inMs !== Number.POSITIVE_INFINITY) wake.in(inMs);
  }

  const slots: TrySlots = {
    enqueue(request, grant) {
      const entry = new Queued(seq++, request, request.target ? breakers.keyOf(request.target) : '', grant, owner);
      queue.add(entry);
      // A new run's start waits for the end of the turn: the runs one commit queued are dispatched
      // once, not once each, on the request's way in. A started run's next try goes at once.
      if (!entry.start) dispatch();
      else if (!scheduled) {
        scheduled = true;
        queueMicrotask(() => {
          scheduled = false;
          dispatch();
        });
      }
      return entry;
    },
    acquire: (request, signal, onWait) => acquireFrom(slots, request, signal, onWait),
    dispatch,
    breakers: () =>
      [...breakers.entries()].map(([key, b]) => ({ ...b.snapshot(stampOf(clock)), waiting: queue.waitingFor(key) })),
    breakerOf: (target) => breakers.find(target)?.snapshot(stampOf(clock)),
    stop() {
      stopped = true;
      wake.stop();
    },
  };
  return slots;
}
