import type { Clock } from '../../clock.js';
import { newId } from '../../ids.js';
import type { Logger } from '../../log.js';
import type { AlertRecord, StoreContract, StoredAlert } from '../../store/index.js';
import type { AlertCondition } from '../../views.js';
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

/** Creates the sender; every failure of the store or the chat is logged, never thrown. */
export function createAlertSender(options: AlertSenderOptions): AlertSender {
  const { store, clock, everyMs } = options;
  const log = options.log.child({ component: 'alerts' });
  const stopping = new AbortController();
  const linkOf = (watch: Watch) => `${options.consoleUrl()}${watch.page}`;

  async function latestOf(watch: Watch): Promise<StoredAlert | undefined> {
    try {
      return await store.alerts.latestFiring(watch.condition, watch.source);
    } catch (err) {
      log.warn({ err, condition: watch.condition, source: watch.source }, 'reading alerts failed');
      return undefined;
    }
  }

  /** Stores `alert`; true when stored, or when the store failed (the message goes out anyway). */
  async function keep(alert: AlertRecord): Promise<boolean> {
    try {
      return await store.alerts.insert(alert);
    } catch (err) {
      log.error({ err, alert: alert.id }, 'storing an alert failed; sending it anyway');
      return true;
    }
  }

  const fieldsOf = (alert: AlertRecord) => ({
    alert: alert.id,
    kind: alert.kind,
    condition: alert.condition,
    source: alert.source,
  });

  async function send(alert: AlertRecord): Promise<void> {
    const fields = fieldsOf(alert);
    try {
      const about = { alert: { id: alert.id, kind: alert.kind, condition: alert.condition, source: alert.source } };
      const channel = options.channel.about?.(about) ?? options.channel;
      await sendWithRetries(channel, options.to, alert.text, { clock, signal: stopping.signal });
      log.info(fields, 'alert sent');
    } catch (err) {
      if (!stopping.signal.aborted) log.error({ ...fields, err }, 'alert not sent');
    }
  }

  /** Takes `firing` as this watch's open alert (another node's, or this one's before a restart). */
  const adopt = (watch: Watch, firing: StoredAlert) => {
    watch.open = { id: firing.id, at: firing.at, observed: true };
    watch.lastFiredAt = firing.at;
    watch.failures = countOf(watch);
    log.info(fieldsOf(firing), ALREADY);
  };

  return {
    async fire(watch) {
      const now = clock.now();
      if (watch.open || !isActive(watch, now)) return;
      if (watch.lastFiredAt !== undefined && now - watch.lastFiredAt < everyMs) return;
      const latest = await latestOf(watch);
      if (latest && latest.recoveredAt === undefined) return adopt(watch, latest);
      if (latest && now - latest.at < everyMs) {
        watch.lastFiredAt = latest.at;
        return;
      }
      const link = linkOf(watch);
      const count = countOf(watch);
      const { lastError } = watch;
      const breaker = options.breakerOf?.(watch.condition, watch.source);
      const facts = {
        count,
        windowMs: watch.windowMs,
        link,
        ...(lastError === undefined ? {} : { lastError }),
        ...(breaker && breaker.state !== 'closed' ? { breaker } : {}),
      };
      const alert: AlertRecord = {
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
      if (!(await keep(alert))) {
        const stored = await latestOf(watch);
        if (stored && stored.recoveredAt === undefined) adopt(watch, stored);
        return;
      }
      watch.open = { id: alert.id, at: now, observed: true };
      watch.lastFiredAt = now;
      // A recovery names the failures of the episode: from those that fired it on.
      watch.failures = count;
      await send(alert);
    },
    async recover(watch, failures, why) {
      const firing = watch.open;
      if (!firing) return;
      watch.open = undefined;
      const link = linkOf(watch);
      const alert: AlertRecord = {
        id: newId(),
        at: clock.now(),
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
      if (await keep(alert)) await send(alert);
      else log.info(fieldsOf(alert), ALREADY);
    },
    stop: () => stopping.abort(),
  };
}
