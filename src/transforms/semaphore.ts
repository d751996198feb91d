/**
 * A counting semaphore with bounded, timed waits in arrival order. It bounds a mapping's
 * isolates (`maxInFlight`, pool.ts) and the calls running off the event loop across mappings:
 * one per spare core. On a 2-core machine four clients of a transform that spins until its
 * time-out took three cores' worth of threads and doubled `/hooks/agent`'s p99 (docs/transforms.md#limits);
 * with one slot they left it within 1.3-1.7×.
 */
export interface Semaphore {
  readonly slots: number;
  /** Slots taken now. */
  readonly taken: number;
  /** Takes a slot, waiting at most `waitMs` behind at most `maxWaiting` others; false when it cannot. */
  acquire(waitMs: number): Promise<boolean>;
  /** Takes a free slot at once, if one is. */
  tryAcquire(): boolean;
  /** Gives a slot back; the oldest waiter gets it. */
  release(): void;
  /** Refuses every waiter and every later acquire. */
  close(): void;
}

export function createSemaphore(slots: number, maxWaiting = Number.POSITIVE_INFINITY): Semaphore {
  let taken = 0;
  let closed = false;
  const waiters: { take(granted: boolean): void; timer: NodeJS.Timeout }[] = [];
  const tryAcquire = () => {
    if (closed || taken >= slots) return false;
    taken++;
    return true;
  };
  return {
    slots,
    get taken() {
      return taken;
    },
    tryAcquire,
    acquire(waitMs) {
      if (tryAcquire()) return Promise.resolve(true);
      if (closed || waitMs <= 0 || waiters.length >= maxWaiting) return Promise.resolve(false);
      return new Promise<boolean>((resolve) => {
        const waiter = {
          take: resolve,
          timer: setTimeout(() => {
            waiters.splice(waiters.indexOf(waiter), 1);
            resolve(false);
          }, waitMs),
        };
        waiters.push(waiter);
      });
    },
    release() {
      const next = waiters.shift();
      if (!next) {
        taken--;
        return;
      }
      // The slot passes straight to the oldest waiter.
      clearTimeout(next.timer);
      next.take(true);
    },
    close() {
      closed = true;
      for (const waiter of waiters.splice(0)) {
        clearTimeout(waiter.timer);
        waiter.take(false);
      }
    },
  };
}
