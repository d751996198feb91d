import { LAST_CHANNEL } from '../../action-shape.js';
import { type Clock, systemClock } from '../../clock.js';
import type { Logger } from '../../log.js';
import type { DeliveryOutcome, MetaStore } from '../../store/index.js';
import { type OnFailure, sendWithRetries, type TryGate } from '../attempts/index.js';
import type { ChatChannel, DeliveryContext } from '../ports.js';

export const HEARTBEAT_OK = 'HEARTBEAT_OK';
export const NO_REPLY = 'NO_REPLY';

/** True when `HEARTBEAT_OK` stands at the reply's start or end and what remains is at most `ackMaxChars`. */
export function isAckOnly(reply: string, ackMaxChars: number): boolean {
  const text = reply.trim();
  let rest: string;
  if (text.startsWith(HEARTBEAT_OK)) rest = text.slice(HEARTBEAT_OK.length);
  else if (text.endsWith(HEARTBEAT_OK)) rest = text.slice(0, -HEARTBEAT_OK.length);
  else return false;
  return rest.trim().length <= ackMaxChars;
}

/** Where a main-session reply last went (docs/runtime.md#delivery); `to` is `''` for a channel that needs none. */
export interface Route {
  readonly channel: string;
  readonly to: string;
}

const LAST_ROUTE_KEY = 'lastRoute:main';

export interface DeliveryOptions {
  /** The configured channels by id, in the config's order. */
  readonly channels: ReadonlyMap<string, ChatChannel>;
  readonly ackMaxChars: number;
  readonly meta: MetaStore;
  readonly log: Logger;
  /** Called with every outcome (the deliveries counter), and the run whose reply it was when one was. */
  readonly onOutcome?: (outcome: DeliveryOutcome, runId?: string) => void;
  /** Waits between tries, and their time limits. */
  readonly clock?: Clock;
}

export interface DeliveryTarget {
  /** A configured channel's id, or `last`. */
  readonly channel: string;
  readonly to?: string;
  /** The run whose reply it is, for the kinds that send it along (docs/channels.md#webhook). */
  readonly runId?: string;
  readonly sessionKey?: string;
  /**
   * True for a main-session turn (a heartbeat): once sent, its route becomes the main
   * session's last route. A hook's run never moves it, whatever its `to` (docs/runtime.md#delivery).
   */
  readonly mainSession?: boolean;
}

/** How one delivery is made. */
export interface DeliverOptions {
  /** Aborts a delivery still retrying or waiting (the gateway stops, its run is cancelled). */
  readonly signal?: AbortSignal;
  /** Told of every failed try. */
  readonly onAttempt?: OnFailure;
  /** Where each try takes its slot (docs/runtime.md#fault-isolation); none: no wait. */
  readonly gate?: TryGate;
}

/** Delivers replies to chat channels (docs/runtime.md#delivery). */
export interface Delivery {
  /** Where a reply to `target` would go, or why it cannot go anywhere. */
  resolve(target: DeliveryTarget): Promise<Route | { reason: string }>;
  /** An outcome decided without trying (deliver false, a failed run), counted like the rest. */
  skipped(reason: string): DeliveryOutcome;
  /** Delivers `reply` (docs/runtime.md#attempts). Never throws. */
  deliver(target: DeliveryTarget, reply: string, options?: DeliverOptions): Promise<DeliveryOutcome>;
}

/** Why a reply is not delivered when no chat channel is configured. */
const NO_CHANNEL = 'no channel: none is configured (channels)';

/** Delivers replies: resolves `last`, skips acknowledgements, records the outcome, never throws. */
export function createDelivery(options: DeliveryOptions): Delivery {
  const log = options.log.child({ component: 'delivery' });
  const clock = options.clock ?? systemClock;

  /**
   * The main session's last route; before any, the first channel (in the config's order) that
   * has a `defaultTo` or needs no recipient.
   */
  async function lastRoute(): Promise<Route | undefined> {
    const stored = await options.meta.get<Route>(LAST_ROUTE_KEY);
    if (stored) return stored;
    for (const channel of options.channels.values()) {
      if (channel.defaultTo !== undefined) return { channel: channel.id, to: channel.defaultTo };
      if (channel.needsRecipient === false) return { channel: channel.id, to: '' };
    }
    return undefined;
  }

  async function resolve(target: DeliveryTarget): Promise<Route | { reason: string }> {
    const last = await lastRoute();
    const channel = target.channel === LAST_CHANNEL ? last?.channel : target.channel;
    if (!channel) return { reason: 'no route: nothing has been delivered yet and no channel has a defaultTo' };
    const to =
      target.to ?? (last?.channel === channel ? last.to : undefined) ?? options.channels.get(channel)?.defaultTo;
    if (to) return { channel, to };
    if (options.channels.get(channel)?.needsRecipient === false) return { channel, to: '' };
    return { reason: `no recipient for ${channel}: pass "to" or set channels.${channel}.defaultTo` };
  }

  return {
    resolve,
    skipped(reason: string): DeliveryOutcome {
      const outcome: DeliveryOutcome = { status: 'skipped', reason };
      options.onOutcome?.(outcome);
      return outcome;
    },
    async deliver(target, reply, deliverOptions = {}) {
      const outcome = await attempt(target, reply, deliverOptions);
      options.onOutcome?.(outcome, target.runId);
      return outcome;
    },
  };

  async function attempt(target: DeliveryTarget, reply: string, how: DeliverOptions): Promise<DeliveryOutcome> {
    const { signal, onAttempt: onFailure, gate } = how;
    const trimmed = reply.trim();
    if (trimmed === NO_REPLY) return { status: 'skipped', reason: 'NO_REPLY' };
    // Chat APIs refuse an empty message: sending one would only fail, and be retried.
    if (trimmed === '') return { status: 'skipped', reason: 'empty reply' };
    if (isAckOnly(reply, options.ackMaxChars)) return { status: 'skipped', reason: 'heartbeat acknowledgement' };
    // Nothing to deliver to is a choice (the embedded default has no channel), not a failure.
    if (options.channels.size === 0) return { status: 'skipped', reason: NO_CHANNEL };
    const route = await resolve(target);
    if ('reason' in route) return { status: 'failed', reason: route.reason };
    const channel = options.channels.get(route.channel);
    const where = { channel: route.channel, ...(route.to === '' ? {} : { to: route.to }) };
    if (!channel) return { status: 'failed', ...where, reason: `channel ${route.channel} is not configured` };
    const context: DeliveryContext = {
      ...(target.runId === undefined ? {} : { runId: target.runId }),
      ...(target.sessionKey === undefined ? {} : { sessionKey: target.sessionKey }),
    };
    try {
      await sendWithRetries(channel.about?.(context) ?? channel, route.to, reply, {
        clock,
        ...(signal ? { signal } : {}),
        ...(onFailure ? { onFailure } : {}),
        ...(gate ? { gate } : {}),
      });
      if (target.mainSession) await options.meta.set(LAST_ROUTE_KEY, route);
      return { status: 'sent', ...where };
    } catch (err) {
      log.warn({ channel: route.channel, err: (err as Error).message }, 'delivery failed');
      return { status: 'failed', ...where, reason: (err as Error).message };
    }
  }
}
