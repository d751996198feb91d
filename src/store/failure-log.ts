import type { Clock } from '../clock.js';
import type { Logger } from '../log.js';
import { createLogWindow } from '../log-window.js';
import { failureFields, isStoreUnavailable } from './unavailable.js';

/**
 * How often a store failure that a timer meets again at each tick (a lease's renewal, a claim)
 * is logged: an outage is told once as it starts and once as it ends (docs/operations.md), and
 * between those each kind of work says once a minute what it could not do.
 */
export const TICK_FAILURE_LOG_MS = 60_000;

/** Failures of one kind of work on the store, logged by failureLog. */
export interface FailureLog {
  report(err: unknown): void;
  /** Logs what is held back (the work stops). */
  flush(): void;
}

/**
 * One warn line `msg` per `everyMs` for the failures of one kind of work: the first at once,
 * its repeats counted (`suppressed`, `intervalMs`) on the last of them as the interval ends. A
 * store out of reach is logged by its cause (failureFields), apart from any other failure, which
 * keeps its error.
 */
export function failureLog(log: Logger, msg: string, everyMs: number, clock?: Pick<Clock, 'setTimeout'>): FailureLog {
  const window = createLogWindow<unknown>(
    everyMs,
    (err, suppressed) => {
      const fields = failureFields(err);
      log.warn(suppressed > 0 ? { ...fields, suppressed, intervalMs: everyMs } : fields, msg);
    },
    clock,
  );
  return {
    report: (err) => window.report(isStoreUnavailable(err) ? 'unavailable' : 'other', err),
    flush: () => window.flush(),
  };
}
