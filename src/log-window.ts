import { type Cancel, type Clock, systemClock } from './clock.js';

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
  cancel: Cancel;
}

/**
 * Creates a window of `intervalMs`; `emit` writes one line (`suppressed`: 0, or how many it stands
 * for). A pending summary never keeps the process alive (the clock's timers do not): `flush`
 * writes it at close.
 */
export function createLogWindow<T>(
  intervalMs: number,
  emit: (item: T, suppressed: number) => void,
  clock: Pick<Clock, 'setTimeout'> = systemClock,
): LogWindow<T> {
  const open = new Map<string, OpenKey<T>>();

  const arm = (key: string) => clock.setTimeout(() => close(key), intervalMs);

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
    entry.cancel = arm(key);
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
      open.set(key, { held: 0, last: undefined, cancel: arm(key) });
    },
    flush() {
      for (const entry of open.values()) {
        entry.cancel();
        if (entry.held > 0) emit(entry.last as T, entry.held);
      }
      open.clear();
    },
  };
}
