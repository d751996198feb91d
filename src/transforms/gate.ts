/**
 * The calls running off the event loop at once, across all mappings: one per spare core. On a
 * 2-core machine four clients of a transform that spins until its time-out took three cores'
 * worth of threads and doubled `/hooks/agent`'s p99 (DESIGN §14); with one they left it within 1.3×.
 */
export interface OffLoopGate {
  /** Calls that may run off the loop at once. */
  readonly slots: number;
  /** Takes a slot, waiting at most `waitMs` in arrival order; false when the wait ran out. */
  acquire(waitMs: number): Promise<boolean>;
  release(): void;
}

export function createOffLoopGate(slots: number): OffLoopGate {
  let running = 0;
  const waiters: { take(): void; timer: NodeJS.Timeout }[] = [];
  return {
    slots,
    acquire(waitMs) {
      if (running < slots) {
        running++;
        return Promise.resolve(true);
      }
      if (waitMs <= 0) return Promise.resolve(false);
      return new Promise<boolean>((resolve) => {
        const waiter = {
          take: () => resolve(true),
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
        running--;
        return;
      }
      // The slot passes straight to the oldest waiter.
      clearTimeout(next.timer);
      next.take();
    },
  };
}
