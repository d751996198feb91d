import type { AlertCondition } from '../../alert-views.js';
import type { Cancel, Clock } from '../../clock.js';
import type { Logger } from '../../log.js';
import type { DeliveryOutcome, StoreContract } from '../../store/index.js';
import type { Attempt, AttemptOwner, TryTarget } from '../attempts/index.js';
import { type BreakerSnapshot, channelTarget, modelTarget, type Target } from '../isolation/index.js';
import type { ChatChannel, ModelRouter } from '../ports.js';
import { createAlertSender } from './alert-sender.js';
import { answerError, UNROUTED } from './alert-text.js';
import { type AlertWatches, fail, readOpen, succeed, tick, watchKey } from './alert-watches.js';
import type { AlertSettings, HookOutcomes, MappingAnswer } from './types.js';
import { watchedChannels, watchedModels } from './watched-ports.js';

/** The destination an alert's source names: a model for modelUnreachable, else a channel. */
const breakerTargetOf = (condition: AlertCondition, source: string): Target =>
  condition === 'modelUnreachable' ? modelTarget(source) : channelTarget(source);

/** How often windows are looked at: a quiet window, a streak that lasted, a firing `every` held back. */
export const ALERT_TICK_MS = 5000;
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
  /** A reply's delivery outcome, and the run whose reply it was (none for the heartbeat's). */
  delivered(outcome: DeliveryOutcome, runId?: string): void;
  /** A run's failed try, and what it was to: alerts about it link to its run. */
  attempted(run: AttemptOwner, attempt: Attempt, target: TryTarget): void;
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

/**
 * What the delivery alerts know besides their watches, by channel id, since its last delivery
 * sent: its last failed try, and the run it was for.
 */
export interface DeliveryFacts {
  /** A try's code and status (a failed delivery's alert names it). */
  readonly channelErrors: Map<string, string>;
  /** The run of the last failed delivery try: the channel's delivery alert links to it. */
  readonly lastRuns: Map<string, string>;
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
  const { store, shared } = options;
  const alerts: AlertWatches = { settings, store, clock, log, sender, shared, watches: new Map(), stopped: false };
  const deliveries: DeliveryFacts = { channelErrors: new Map(), lastRuns: new Map() };
  let stopTicking: Cancel | undefined;
  return {
    outcomes: hookOutcomes(alerts),
    watchModels: (models) =>
      watchedModels(
        models,
        {
          succeeded: (ref) => succeed(alerts, 'modelUnreachable', settings.modelSource(ref), 'a try succeeded'),
          failed: (ref, error) => fail(alerts, 'modelUnreachable', settings.modelSource(ref), error),
        },
        clock,
      ),
    watchChannels: (channels) => watchedChannels(channels, (id, error) => deliveries.channelErrors.set(id, error)),
    delivered: (outcome, runId) => delivered(alerts, deliveries, outcome, runId),
    attempted: (run, attempt, target) => attempted(alerts, deliveries, run, attempt, target),
    breakerChanged: (breaker) => breakerChanged(alerts, breaker),
    async start() {
      await readOpen(alerts);
      stopTicking = clock.setInterval(() => tick(alerts), ALERT_TICK_MS);
    },
    async stop() {
      alerts.stopped = true;
      stopTicking?.();
      sender.stop();
      await Promise.allSettled([...alerts.watches.values()].map((w) => w.busy));
    },
  };
}

/** What the hook routes report, counted as mapping and signature failures and successes. */
export function hookOutcomes(alerts: AlertWatches): HookOutcomes {
  return {
    answered(mappingId, answer) {
      if (answer.status >= 500 || answer.status === 400)
        fail(alerts, 'mappingFailures', mappingId, answerError(answer), answerPage(answer));
      else if (answer.status < 300) succeed(alerts, 'mappingFailures', mappingId, `it answered ${answer.status}`);
    },
    signatureRefused: (mappingId, reason) =>
      fail(alerts, 'signatureFailures', mappingId, `SIGNATURE_INVALID: ${reason}`, '#/failed/refused'),
    signatureHeld: (mappingId) => succeed(alerts, 'signatureFailures', mappingId, 'a signature held'),
  };
}

/**
 * A reply's delivery outcome: a sent one recovers its channel (and forgets its last failure), a
 * failed one counts with its channel's last try's error and links to its run (`runId`; for the
 * heartbeat's reply, which has none, the run of the channel's last failed try).
 */
export function delivered(
  alerts: AlertWatches,
  deliveries: DeliveryFacts,
  outcome: DeliveryOutcome,
  runId?: string,
): void {
  const { channel } = outcome;
  const source = channel ?? UNROUTED;
  if (outcome.status === 'sent') {
    succeed(alerts, 'deliveryFailures', source, 'a reply was delivered');
    if (channel === undefined) return;
    deliveries.channelErrors.delete(channel);
    deliveries.lastRuns.delete(channel);
  }
  if (outcome.status !== 'failed') return;
  // A try's code and status; without a try, the routing's own reason (hookd's words).
  const error = (channel && deliveries.channelErrors.get(channel)) || outcome.reason || 'failed';
  const run = runId ?? (channel === undefined ? undefined : deliveries.lastRuns.get(channel));
  fail(alerts, 'deliveryFailures', source, error, run && `#/runs/${encodeURIComponent(run)}`);
}

/** A run's failed try: its channel's delivery alert or its model's alert links to the run. */
export function attempted(
  alerts: AlertWatches,
  deliveries: DeliveryFacts,
  run: AttemptOwner,
  attempt: Attempt,
  target: TryTarget,
): void {
  if (attempt.kind === 'delivery') {
    if ('channel' in target) deliveries.lastRuns.set(target.channel, run.id);
  } else if (run.model !== undefined) {
    const watch = alerts.watches.get(watchKey('modelUnreachable', run.model));
    if (watch) watch.page = `#/runs/${encodeURIComponent(run.id)}`;
  }
}

/** A channel's breaker that opened counts as one failed delivery: its deliveries wait instead of failing. */
export function breakerChanged(alerts: AlertWatches, breaker: BreakerSnapshot): void {
  if (breaker.kind !== 'channel' || breaker.state !== 'open') return;
  const last = breaker.lastError === undefined ? '' : ` (last: ${breaker.lastError})`;
  fail(
    alerts,
    'deliveryFailures',
    breaker.target,
    `breaker open after ${breaker.failures} failed tries in a row${last}`,
  );
}

/** The console page of a failed request: itself when the request log holds it, else its list. */
function answerPage(answer: MappingAnswer): string {
  if (answer.requestId !== undefined) return `#/requests/${encodeURIComponent(answer.requestId)}`;
  return answer.status >= 500 ? '#/failed' : '#/requests';
}
