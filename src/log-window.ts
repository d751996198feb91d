/**
 * One log line per key per interval, and never a silent drop (docs/operations.md#backpressure): the
 * first occurrence is logged at once; those that follow within the interval are counted, and
 * when it ends the last of them is logged with that count (`suppressed`), which opens the next
 * interval. An interval without any closes the key, so the next occurrence is logged at once.
 */
export interface LogWindow<T> {
  /** Logs `item` now, or holds it back (counted) until its key's interval ends. */
  report(key: string, item: T): void;
  /** Logs what is held back now and stops the timers (the gateway is closing). */
  flush(): void;
}

interface OpenKey<T> {
  held: number;
  last: T | undefined;
  timer: ReturnType<typeof setTimeout>;
}

/** Creates a window of `intervalMs`; `emit` writes one line (`suppressed`: 0, or how many it stands for). */
export function createLogWindow<T>(intervalMs: number, emit: (item: T, suppressed: number) => void): LogWindow<T> {
  const open = new Map<string, OpenKey<T>>();

  const arm = (key: string) => {
    const timer = setTimeout(() => close(key), intervalMs);
    // A pending summary never keeps the process alive: `flush` writes it at close.
    timer.unref?.();
    return timer;
  };

  function close(key: string): void {
    const entry = open.get(key);
    if (!entry) return;
    if (entry.held === 0) {
      open.delete(key);
      return;
    }
    emit(entry.last as T, entry.held);
    entry.held = 0;
    entry.last = undefined;
    entry.timer = arm(key);
  }

  return {
    report(key, item) {
      const entry = open.get(key);
      if (entry) {
        entry.held++;
        entry.last = item;
        return;
      }
      emit(item, 0);
      open.set(key, { held: 0, last: undefined, timer: arm(key) });
    },
    flush() {
      for (const entry of open.values()) {
        clearTimeout(entry.timer);
        if (entry.held > 0) emit(entry.last as T, entry.held);
      }
      open.clear();
    },
  };
}
