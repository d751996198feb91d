import type { Cancel, Clock } from '../../clock.js';
import type { Logger } from '../../log.js';
import type { DeliveryOutcome, StoreContract } from '../../store/index.js';
import type { AlertCondition } from '../../views.js';
import type { Attempt, AttemptOwner } from '../attempts/index.js';
import { type BreakerSnapshot, channelTarget, modelTarget, type Target } from '../isolation/index.js';
import type { ChatChannel, ModelRouter } from '../ports.js';
import { createAlertSender } from './alert-sender.js';
import { answerError, UNROUTED } from './alert-text.js';
import type { AlertSettings, HookOutcomes, MappingAnswer } from './types.js';
import { countFailure, createWatch, isActive, isIdle, isQuiet, type Watch } from './watch.js';
import { watchedChannels, watchedModels } from './watched-ports.js';

/** The destination an alert's source names: a model for modelUnreachable, else a channel. */
const breakerTargetOf = (condition: AlertCondition, source: string): Target =>
  condition === 'modelUnreachable' ? modelTarget(source) : channelTarget(source);

/** How often windows are looked at: a quiet window, a streak that lasted, a firing `every` held back. */
export const ALERT_TICK_MS = 5000;
/** Sources watched at most per gateway (model references come from requests: bounded here). */
const MAX_WATCHES = 1000;

export interface AlertsOptions {
  readonly settings: AlertSettings;
  readonly store: StoreContract;
  /** The channel alerts go through (`hooks.alerts.channel`), with its own retries. */
  readonly channel: ChatChannel;
  /** The console's address (`http://host:port/ui/`), read when a message is made. */
  readonly consoleUrl: () => string;
  readonly log: Logger;
  readonly clock: Clock;
  /**
   * On a store shared by nodes, open alerts read at start are other nodes' until this one sees
   * their failures: only a success it sees closes them (docs/operations.md#alerts).
   */
  readonly shared: boolean;
  /** A destination's breaker, for the model and delivery alerts' messages. */
  readonly breakerOf?: (target: Target) => BreakerSnapshot | undefined;
}

/** Alerts (docs/operations.md#alerts): failures counted per source, one message per condition, then one when it clears. */
export interface Alerts {
  /** What the hook routes report. */
  readonly outcomes: HookOutcomes;
  /** `models`, with every try's outcome counted. */
  watchModels(models: ModelRouter): ModelRouter;
  /** `channels`, with each failed try kept as its channel's last error (alerts themselves use the bare port). */
  watchChannels(channels: ReadonlyMap<string, ChatChannel>): ReadonlyMap<string, ChatChannel>;
  /** A reply's delivery outcome. */
  delivered(outcome: DeliveryOutcome): void;
  /** A run's failed try: alerts about it link to its run. */
  attempted(run: AttemptOwner, attempt: Attempt): void;
  /**
   * A breaker opened or closed. While a channel's is open its deliveries wait instead of failing,
   * so each opening counts as one failed delivery (docs/operations.md#alerts).
   */
  breakerChanged(breaker: BreakerSnapshot): void;
  /** Reads the open alerts and starts looking at windows. */
  start(): Promise<void>;
  /** Stops counting, aborts messages in flight and waits for the store writes under way. */
  stop(): Promise<void>;
}

/** Creates the alerts of one gateway; counting is this node's own (docs/operations.md#alerts). */
export function createAlerts(options: AlertsOptions): Alerts {
  const { settings, clock } = options;
  const log = options.log.child({ component: 'alerts' });
  const { breakerOf, ...senderOptions } = options;
  const sender = createAlertSender({
    ...senderOptions,
    to: settings.to,
    everyMs: settings.everyMs,
    ...(breakerOf ? { breakerOf: (condition, source) => breakerOf(breakerTargetOf(condition, source)) } : {}),
  });
  const watches = new Map<string, Watch>();
  const channelErrors = new Map<string, string>();
  let lastDeliveryRun: string | undefined;
  let stopped = false;
  let stopTicking: Cancel | undefined;
  const keyOf = (condition: AlertCondition, source: string) => `${condition}\n${source}`;

  /** Runs `step` after the watch's earlier steps; failures are logged. */
  const queue = (watch: Watch, step: () => Promise<void>) => {
    watch.queued++;
    watch.busy = watch.busy
      .then(step)
      .catch((err: unknown) => log.error({ err, condition: watch.condition, source: watch.source }, 'alert failed'))
      .finally(() => {
        watch.queued--;
      });
  };

  /** The watch of `condition` and `source`, made when missing (none when the condition is off or too many are kept). */
  function watchOf(condition: AlertCondition, source: string): Watch | undefined {
    const key = keyOf(condition, source);
    const found = watches.get(key);
    if (found) return found;
    const threshold = settings.conditions.get(condition);
    if (!threshold) return undefined;
    if (watches.size >= MAX_WATCHES) {
      const now = clock.now();
      for (const [k, w] of watches) if (isIdle(w, now)) watches.delete(k);
      if (watches.size >= MAX_WATCHES) return undefined;
    }
    const watch = createWatch(condition, source, threshold);
    watches.set(key, watch);
    return watch;
  }

  function fail(condition: AlertCondition, source: string, error: string, page?: string): void {
    if (stopped) return;
    const watch = watchOf(condition, source);
    if (!watch) return;
    const now = clock.now();
    countFailure(watch, now, error, page);
    if (!watch.open && isActive(watch, now)) fire(watch);
  }

  /** Queues a firing, once: a flood of failures while it is stored and sent queues nothing more. */
  function fire(watch: Watch): void {
    if (watch.firing) return;
    watch.firing = true;
    queue(watch, () => {
      watch.firing = false;
      return sender.fire(watch);
    });
  }

  /**
   * A success of `source`: a model's failing streak ends; an open (or opening) alert recovers and
   * its count starts again. Before an alert, failures in the window still count: a mapping that
   * fails every other request alerts all the same.
   */
  function succeed(condition: AlertCondition, source: string, why: string): void {
    const watch = watches.get(keyOf(condition, source));
    if (!watch || stopped) return;
    delete watch.since;
    if (!watch.open && watch.queued === 0) return;
    queue(watch, async () => {
      // A firing held back by `every` leaves nothing to recover, and its count stands.
      if (!watch.open) return;
      const failures = watch.failures;
      watch.times = [];
      watch.failures = 0;
      await sender.recover(watch, failures, why);
    });
  }

  function tick(): void {
    const now = clock.now();
    for (const watch of watches.values()) {
      if (watch.queued > 0) continue;
      if (isQuiet(watch, now)) {
        const failures = watch.failures;
        watch.failures = 0;
        queue(watch, () => sender.recover(watch, failures));
      } else if (!watch.open && isActive(watch, now)) fire(watch);
    }
  }

  const outcomes: HookOutcomes = {
    answered(mappingId, answer) {
      if (answer.status >= 500 || answer.status === 400)
        fail('mappingFailures', mappingId, answerError(answer), answerPage(answer));
      else if (answer.status < 300) succeed('mappingFailures', mappingId, `it answered ${answer.status}`);
    },
    signatureRefused: (mappingId, reason) =>
      fail('signatureFailures', mappingId, `SIGNATURE_INVALID: ${reason}`, '#/failed/refused'),
    signatureHeld: (mappingId) => succeed('signatureFailures', mappingId, 'a signature held'),
  };

  return {
    outcomes,
    watchModels: (models) =>
      watchedModels(models, {
        succeeded: (ref) => succeed('modelUnreachable', ref, 'a try succeeded'),
        failed: (ref, error) => fail('modelUnreachable', ref, error),
      }),
    watchChannels: (channels) => watchedChannels(channels, (id, error) => channelErrors.set(id, error)),
    delivered(outcome) {
      const source = outcome.channel ?? UNROUTED;
      if (outcome.status === 'sent') succeed('deliveryFailures', source, 'a reply was delivered');
      if (outcome.status !== 'failed') return;
      // A try's code and status; without a try, the routing's own reason (hookd's words).
      const error = (outcome.channel && channelErrors.get(outcome.channel)) || outcome.reason || 'failed';
      fail('deliveryFailures', source, error, lastDeliveryRun && `#/runs/${encodeURIComponent(lastDeliveryRun)}`);
    },
    attempted(run, attempt) {
      if (attempt.kind === 'delivery') lastDeliveryRun = run.id;
      else if (run.model !== undefined) {
        const watch = watches.get(keyOf('modelUnreachable', run.model));
        if (watch) watch.page = `#/runs/${encodeURIComponent(run.id)}`;
      }
    },
    breakerChanged(breaker) {
      if (breaker.kind !== 'channel' || breaker.state !== 'open') return;
      const last = breaker.lastError === undefined ? '' : ` (last: ${breaker.lastError})`;
      fail('deliveryFailures', breaker.target, `breaker open after ${breaker.failures} failed tries in a row${last}`);
    },
    async start() {
      await readOpen();
      stopTicking = clock.setInterval(tick, ALERT_TICK_MS);
    },
    async stop() {
      stopped = true;
      stopTicking?.();
      sender.stop();
      await Promise.allSettled([...watches.values()].map((w) => w.busy));
    },
  };

  /** Open alerts of an earlier start (or, on a shared store, of other nodes) become watches again. */
  async function readOpen(): Promise<void> {
    try {
      const open = await options.store.alerts.list({ open: true, limit: MAX_WATCHES });
      const now = clock.now();
      for (const alert of open.reverse()) {
        const watch = watchOf(alert.condition, alert.source);
        if (!watch || watch.open) continue;
        watch.open = { id: alert.id, at: alert.at, observed: !options.shared };
        watch.lastFiredAt = alert.at;
        watch.failures = alert.count;
        // A quiet window from now closes it: nothing is known of the time before this start.
        watch.lastFailureAt = now;
        if (alert.link.includes('#')) watch.page = alert.link.slice(alert.link.indexOf('#'));
      }
    } catch (err) {
      log.warn({ err }, 'reading open alerts failed');
    }
  }
}

/** The console page of a failed request: itself when the request log holds it, else its list. */
function answerPage(answer: MappingAnswer): string {
  if (answer.requestId !== undefined) return `#/requests/${encodeURIComponent(answer.requestId)}`;
  return answer.status >= 500 ? '#/failed' : '#/requests';
}
