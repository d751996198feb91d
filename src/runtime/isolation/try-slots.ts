import type { Cancel, Clock } from '../../clock.js';
import { type Breaker, type BreakerSnapshot, createBreaker, type TryOutcome } from './breaker.js';
import { createFairQueue, type Queued as QueuedEntry } from './fair-queue.js';
import { type Target, type TargetLimits, targetKey } from './targets.js';
import { waitText } from './wait-text.js';

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

/** Breakers kept at most: model references come from requests. Idle ones are dropped past it. */
const MAX_BREAKERS = 1000;

/** Creates the slots of one gateway. */
export function createTrySlots(options: TrySlotsOptions): TrySlots {
  const { clock } = options;
  const queue = createFairQueue<Queued>();
  const breakers = new Map<string, Breaker>();
  const inFlight = new Map<string, number>();
  const bySource = new Map<string, number>();
  let runs = 0;
  let seq = 0;
  let lastStart = Number.NEGATIVE_INFINITY;
  let stopped = false;
  let dispatching = false;
  let again = false;
  let wake: { at: number; cancel: Cancel } | undefined;

  /** A request in the queue: its own ticket (one object per request, on the request's way in). */
  class Queued implements QueuedEntry, Ticket {
    readonly source: string;
    readonly start: boolean;
    readonly ready: (() => boolean) | undefined;
    queued = false;
    constructor(
      readonly seq: number,
      readonly request: Request,
      readonly key: string,
      readonly grant: (permit: Permit) => void,
    ) {
      this.source = request.source;
      this.start = request.start ?? false;
      this.ready = request.ready;
    }
    cancel(): boolean {
      const removed = queue.remove(this);
      if (removed) dispatch();
      return removed;
    }
    wait(): Wait | undefined {
      return this.queued ? whyWaiting(this) : undefined;
    }
  }
  type Entry = Queued;
  let scheduled = false;
  /** Dispatches once at the end of this turn, however many requests it queued. */
  const later = () => {
    if (scheduled) return;
    scheduled = true;
    queueMicrotask(() => {
      scheduled = false;
      dispatch();
    });
  };

  const limitOf = (target: Target) =>
    target.kind === 'model' ? options.limits.model(target.id) : options.limits.channel(target.id);
  const targets = new Map<string, Target>();
  /** Each destination's key, made once per destination object. */
  const keys = new WeakMap<Target, string>();
  const keyOf = (target: Target) => {
    let key = keys.get(target);
    if (key === undefined) {
      key = targetKey(target);
      keys.set(target, key);
    }
    return key;
  };

  function breakerOf(target: Target): Breaker {
    const key = keyOf(target);
    let breaker = breakers.get(key);
    if (breaker) return breaker;
    if (breakers.size >= MAX_BREAKERS)
      for (const [k, b] of breakers) if (b.idle && !inFlight.get(k)) breakers.delete(k);
    breaker = createBreaker(target.kind, target.id, (b, now) => options.onBreaker?.(b.snapshot(now)));
    breakers.set(key, breaker);
    targets.set(key, target);
    return breaker;
  }

  const spacingLeft = () => lastStart + (options.startSpacingMs?.() ?? 0) - clock.now();

  const admission = {
    target(key: string): boolean {
      const target = targets.get(key) as Target;
      return (inFlight.get(key) ?? 0) < limitOf(target) && breakerOf(target).admits(clock.now());
    },
    slots(entry: Entry): boolean {
      if (!entry.request.runSlot) return true;
      const limit = options.sourceLimit?.(entry.source);
      return runs < options.runSlots && (limit === undefined || (bySource.get(entry.source) ?? 0) < limit);
    },
    starts: () => spacingLeft() <= 0,
  };

  function permitFor(entry: Entry): Permit {
    const { request } = entry;
    const key = entry.key;
    const now = clock.now();
    const probe = request.target ? breakerOf(request.target).begin(now) : false;
    if (key) inFlight.set(key, (inFlight.get(key) ?? 0) + 1);
    if (request.runSlot) {
      runs++;
      bySource.set(entry.source, (bySource.get(entry.source) ?? 0) + 1);
    }
    if (entry.start) lastStart = now;
    let released = false;
    return {
      target: request.target,
      probe,
      release(outcome, error) {
        if (released) return;
        released = true;
        if (key) inFlight.set(key, (inFlight.get(key) ?? 1) - 1);
        if (request.runSlot) {
          runs--;
          bySource.set(entry.source, (bySource.get(entry.source) ?? 1) - 1);
        }
        if (request.target) breakerOf(request.target).end(outcome, probe, clock.now(), error);
        dispatch();
      },
    };
  }

  /** Sets one timer for the moment something blocked may go: a breaker's probe, the spacing's end. */
  function armWake(): void {
    const now = clock.now();
    let at = Number.POSITIVE_INFINITY;
    for (const [key, breaker] of breakers) {
      const until = breaker.openUntil;
      if (until !== undefined && until > now && queue.waitingFor(key) > 0) at = Math.min(at, until);
    }
    const spacing = spacingLeft();
    if (queue.size > 0 && spacing > 0) at = Math.min(at, now + spacing);
    if (at === Number.POSITIVE_INFINITY || (wake && wake.at <= at && wake.at > now)) return;
    wake?.cancel();
    const cancel = clock.setTimeout(
      () => {
        wake = undefined;
        dispatch();
      },
      Math.ceil(at - now),
    );
    wake = { at, cancel };
  }

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
          entry.grant(permitFor(entry));
        }
      } while (again && !stopped);
    } finally {
      dispatching = false;
    }
    if (!stopped && queue.size > 0) armWake();
  }

  const slots: TrySlots = {
    enqueue(request, grant) {
      const target = request.target;
      let key = '';
      if (target) {
        key = keyOf(target);
        if (!targets.has(key)) targets.set(key, target);
      }
      const entry = new Queued(seq++, request, key, grant);
      queue.add(entry);
      // A new run's start waits for the end of the turn: the runs one commit queued are dispatched
      // once, not once each, on the request's way in. A started run's next try goes at once.
      if (entry.start) later();
      else dispatch();
      return entry;
    },
    acquire(request, signal, onWait) {
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
    },
    dispatch,
    breakers() {
      const now = clock.now();
      return [...breakers].map(([key, b]) => ({ ...b.snapshot(now), waiting: queue.waitingFor(key) }));
    },
    breakerOf: (target) => breakers.get(keyOf(target))?.snapshot(clock.now()),
    stop() {
      stopped = true;
      wake?.cancel();
      wake = undefined;
    },
  };

  /** Why `entry` waits now, the first thing that holds it back. */
  function whyWaiting(entry: Entry): Wait {
    const now = clock.now();
    const { request } = entry;
    const target = request.target;
    const breaker = target && breakerOf(target);
    const context = {
      now,
      ...(target ? { target, limit: limitOf(target), inFlight: inFlight.get(entry.key) ?? 0 } : {}),
      ...(breaker ? { breaker: breaker.snapshot(now) } : {}),
      runSlot: request.runSlot,
      runs,
      runSlots: options.runSlots,
      source: entry.source,
      sourceLimit: options.sourceLimit?.(entry.source),
      sourceInFlight: bySource.get(entry.source) ?? 0,
      ready: entry.ready?.() ?? true,
    };
    return waitText(context);
  }

  return slots;
}
