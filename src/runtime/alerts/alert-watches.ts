import type { AlertCondition } from '../../alert-views.js';
import type { Clock } from '../../clock.js';
import type { Logger } from '../../log.js';
import type { StoreContract } from '../../store/index.js';
import type { AlertSender } from './alert-sender.js';
import type { AlertSettings } from './types.js';
import { countFailure, createWatch, isActive, isIdle, isQuiet, type Watch } from './watch.js';

/** Sources watched at most per gateway (model references come from requests: bounded here). */
export const MAX_WATCHES = 1000;

/** The watches of one node, by condition and source, and what their firings and recoveries go through. */
export interface AlertWatches {
  readonly settings: AlertSettings;
  readonly store: StoreContract;
  readonly clock: Clock;
  readonly log: Logger;
  readonly sender: AlertSender;
  /** A store shared by nodes: open alerts read at start are others' until this node sees their failures. */
  readonly shared: boolean;
  readonly watches: Map<string, Watch>;
  /** Stopped: nothing more is counted. */
  stopped: boolean;
}

/** The key of a watch in `watches`. */
export const watchKey = (condition: AlertCondition, source: string): string => `${condition}\n${source}`;

/** Runs `step` after the watch's earlier steps; failures are logged. */
export function queueStep(alerts: AlertWatches, watch: Watch, step: () => Promise<void>): void {
  watch.queued++;
  watch.busy = watch.busy
    .then(step)
    .catch((err: unknown) =>
      alerts.log.error({ err, condition: watch.condition, source: watch.source }, 'alert failed'),
    )
    .finally(() => {
      watch.queued--;
    });
}

/** The watch of `condition` and `source`, made when missing (none when the condition is off or too many are kept). */
export function watchOf(alerts: AlertWatches, condition: AlertCondition, source: string): Watch | undefined {
  const { watches } = alerts;
  const key = watchKey(condition, source);
  const found = watches.get(key);
  if (found) return found;
  const threshold = alerts.settings.conditions.get(condition);
  if (!threshold) return undefined;
  if (watches.size >= MAX_WATCHES) {
    const now = alerts.clock.now();
    for (const [k, w] of watches) if (isIdle(w, now)) watches.delete(k);
    if (watches.size >= MAX_WATCHES) return undefined;
  }
  const watch = createWatch(condition, source, threshold);
  watches.set(key, watch);
  return watch;
}

/** Counts a failure of `source`, and fires its alert once the condition holds. */
export function fail(
  alerts: AlertWatches,
  condition: AlertCondition,
  source: string,
  error: string,
  page?: string,
): void {
  if (alerts.stopped) return;
  const watch = watchOf(alerts, condition, source);
  if (!watch) return;
  const now = alerts.clock.now();
  countFailure(watch, now, error, page);
  if (!watch.open && isActive(watch, now)) fire(alerts, watch);
}

/** Queues a firing, once: a flood of failures while it is stored and sent queues nothing more. */
export function fire(alerts: AlertWatches, watch: Watch): void {
  if (watch.firing) return;
  watch.firing = true;
  queueStep(alerts, watch, () => {
    watch.firing = false;
    return alerts.sender.fire(watch);
  });
}

/**
 * A success of `source`: a model's failing streak ends; an open (or opening) alert recovers and
 * its count starts again. Before an alert, failures in the window still count: a mapping that
 * fails every other request alerts all the same.
 */
export function succeed(alerts: AlertWatches, condition: AlertCondition, source: string, why: string): void {
  const watch = alerts.watches.get(watchKey(condition, source));
  if (!watch || alerts.stopped) return;
  delete watch.since;
  if (!watch.open && watch.queued === 0) return;
  queueStep(alerts, watch, async () => {
    // A firing held back by `every` leaves nothing to recover, and its count stands.
    if (!watch.open) return;
    const failures = watch.failures;
    watch.times = [];
    watch.failures = 0;
    await alerts.sender.recover(watch, failures, why);
  });
}

/** Looks at every idle watch: a quiet window recovers its alert, a condition that came to hold fires. */
export function tick(alerts: AlertWatches): void {
  const now = alerts.clock.now();
  for (const watch of alerts.watches.values()) {
    if (watch.queued > 0) continue;
    if (isQuiet(watch, now)) {
      const failures = watch.failures;
      watch.failures = 0;
      queueStep(alerts, watch, () => alerts.sender.recover(watch, failures));
    } else if (!watch.open && isActive(watch, now)) fire(alerts, watch);
  }
}

/** Open alerts of an earlier start (or, on a shared store, of other nodes) become watches again. */
export async function readOpen(alerts: AlertWatches): Promise<void> {
  try {
    const open = await alerts.store.alerts.list({ open: true, limit: MAX_WATCHES });
    const now = alerts.clock.now();
    for (const alert of open.reverse()) {
      const watch = watchOf(alerts, alert.condition, alert.source);
      if (!watch || watch.open) continue;
      watch.open = { id: alert.id, at: alert.at, observed: !alerts.shared };
      watch.lastFiredAt = alert.at;
      watch.failures = alert.count;
      // A quiet window from now closes it: nothing is known of the time before this start.
      watch.lastFailureAt = now;
      if (alert.link.includes('#')) watch.page = alert.link.slice(alert.link.indexOf('#'));
    }
  } catch (err) {
    alerts.log.warn({ err }, 'reading open alerts failed');
  }
}
