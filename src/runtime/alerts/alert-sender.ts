import type { AlertCondition } from '../../alert-views.js';
import type { Clock } from '../../clock.js';
import { newId } from '../../ids.js';
import type { Logger } from '../../log.js';
import type { AlertRecord, StoreContract, StoredAlert } from '../../store/index.js';
import { sendWithRetries } from '../attempts/index.js';
import type { BreakerSnapshot } from '../isolation/index.js';
import type { ChatChannel } from '../ports.js';
import { firingText, recoveryText } from './alert-text.js';
import { countOf, isActive, type Watch } from './watch.js';

export interface AlertSenderOptions {
  readonly store: StoreContract;
  readonly channel: ChatChannel;
  readonly to: string;
  readonly everyMs: number;
  /** The console's address (`http://host:port/ui/`), read when a message is made. */
  readonly consoleUrl: () => string;
  readonly log: Logger;
  readonly clock: Clock;
  /** The breaker a condition's source has, while it holds tries back (model and delivery alerts). */
  readonly breakerOf?: (condition: AlertCondition, source: string) => BreakerSnapshot | undefined;
}

/** Stores and sends the firings and recoveries of watches (docs/operations.md#alerts). */
export interface AlertSender {
  /** Fires `watch` when its condition holds, no firing is open, and none was sent within `every`. */
  fire(watch: Watch): Promise<void>;
  /** Sends the recovery of `watch`'s open firing; `why` is what showed it (none: a quiet window). */
  recover(watch: Watch, failures: number, why?: string): Promise<void>;
  /** Aborts messages still being tried. */
  stop(): void;
}

/**
 * The key of the firing that follows `before` (none: the first): nodes that decide it at once
 * write the same key, and the store keeps one row (docs/operations.md#alerts).
 */
const keyOf = (watch: Watch, before: StoredAlert | undefined) =>
  JSON.stringify([watch.condition, watch.source, before?.id ?? null]);

/** What a node logs when the store holds a message it decided: another node (or its own earlier start) sent it. */
const ALREADY = 'alert already stored; not sent again';

/** A sender's options with its own log and what aborts its messages in flight. */
export interface SenderParts extends AlertSenderOptions {
  readonly stopping: AbortController;
}

/** Creates the sender; every failure of the store or the chat is logged, never thrown. */
export function createAlertSender(options: AlertSenderOptions): AlertSender {
  const parts: SenderParts = {
    ...options,
    log: options.log.child({ component: 'alerts' }),
    stopping: new AbortController(),
  };
  return {
    fire: (watch) => fireWatch(parts, watch),
    recover: (watch, failures, why) => recoverWatch(parts, watch, failures, why),
    stop: () => parts.stopping.abort(),
  };
}

/** The newest firing the store holds for the watch; none when it could not be read (logged). */
async function latestOf(parts: SenderParts, watch: Watch): Promise<StoredAlert | undefined> {
  try {
    return await parts.store.alerts.latestFiring(watch.condition, watch.source);
  } catch (err) {
    parts.log.warn({ err, condition: watch.condition, source: watch.source }, 'reading alerts failed');
    return undefined;
  }
}

/** Stores `alert`; true when stored, or when the store failed (the message goes out anyway). */
async function keep(parts: SenderParts, alert: AlertRecord): Promise<boolean> {
  try {
    return await parts.store.alerts.insert(alert);
  } catch (err) {
    parts.log.error({ err, alert: alert.id }, 'storing an alert failed; sending it anyway');
    return true;
  }
}

const fieldsOf = (alert: AlertRecord) => ({
  alert: alert.id,
  kind: alert.kind,
  condition: alert.condition,
  source: alert.source,
});

/** Sends `alert` through the alerts' channel, with its retries, until the sender stops. */
async function send(parts: SenderParts, alert: AlertRecord): Promise<void> {
  const { log, stopping } = parts;
  const fields = fieldsOf(alert);
  try {
    const about = { alert: { id: alert.id, kind: alert.kind, condition: alert.condition, source: alert.source } };
    const channel = parts.channel.about?.(about) ?? parts.channel;
    await sendWithRetries(channel, parts.to, alert.text, { clock: parts.clock, signal: stopping.signal });
    log.info(fields, 'alert sent');
  } catch (err) {
    if (!stopping.signal.aborted) log.error({ ...fields, err }, 'alert not sent');
  }
}

/** Takes `firing` as this watch's open alert (another node's, or this one's before a restart). */
function adopt(parts: SenderParts, watch: Watch, firing: StoredAlert): void {
  watch.open = { id: firing.id, at: firing.at, observed: true };
  watch.lastFiredAt = firing.at;
  watch.failures = countOf(watch);
  parts.log.info(fieldsOf(firing), ALREADY);
}

/**
 * The firing of `watch` at `now`, after `latest`: its count, window, last error, the source's
 * breaker while not closed, and the console page of its last failure.
 */
export function firingOf(
  parts: Pick<SenderParts, 'consoleUrl' | 'breakerOf'>,
  watch: Watch,
  latest: StoredAlert | undefined,
  now: number,
): AlertRecord {
  const link = `${parts.consoleUrl()}${watch.page}`;
  const count = countOf(watch);
  const { lastError } = watch;
  const breaker = parts.breakerOf?.(watch.condition, watch.source);
  const facts = {
    count,
    windowMs: watch.windowMs,
    link,
    ...(lastError === undefined ? {} : { lastError }),
    ...(breaker && breaker.state !== 'closed' ? { breaker } : {}),
  };
  return {
    id: newId(),
    at: now,
    kind: 'firing',
    condition: watch.condition,
    source: watch.source,
    count,
    ...(lastError === undefined ? {} : { lastError }),
    link,
    text: firingText(watch.condition, watch.source, facts),
    key: keyOf(watch, latest),
  };
}

/** Fires `watch` when its condition holds, no firing is open, and none was sent within `every`. */
export async function fireWatch(parts: SenderParts, watch: Watch): Promise<void> {
  const { everyMs } = parts;
  const now = parts.clock.now();
  if (watch.open || !isActive(watch, now)) return;
  if (watch.lastFiredAt !== undefined && now - watch.lastFiredAt < everyMs) return;
  const latest = await latestOf(parts, watch);
  if (latest && latest.recoveredAt === undefined) return adopt(parts, watch, latest);
  if (latest && now - latest.at < everyMs) {
    watch.lastFiredAt = latest.at;
    return;
  }
  const alert = firingOf(parts, watch, latest, now);
  if (!(await keep(parts, alert))) {
    const stored = await latestOf(parts, watch);
    if (stored && stored.recoveredAt === undefined) adopt(parts, watch, stored);
    return;
  }
  watch.open = { id: alert.id, at: now, observed: true };
  watch.lastFiredAt = now;
  // A recovery names the failures of the episode: from those that fired it on.
  watch.failures = alert.count;
  await send(parts, alert);
}

/** Sends the recovery of `watch`'s open firing; `why` is what showed it (none: a quiet window). */
export async function recoverWatch(parts: SenderParts, watch: Watch, failures: number, why?: string): Promise<void> {
  const firing = watch.open;
  if (!firing) return;
  watch.open = undefined;
  const link = `${parts.consoleUrl()}${watch.page}`;
  const alert: AlertRecord = {
    id: newId(),
    at: parts.clock.now(),
    kind: 'recovered',
    condition: watch.condition,
    source: watch.source,
    count: failures,
    link,
    text: recoveryText(watch.condition, watch.source, {
      failures,
      windowMs: watch.windowMs,
      link,
      ...(why === undefined ? {} : { why }),
    }),
    recovers: firing.id,
  };
  if (await keep(parts, alert)) await send(parts, alert);
  else parts.log.info(fieldsOf(alert), ALREADY);
}
