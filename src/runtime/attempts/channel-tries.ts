import { type BackoffBounds, backoffMs } from '../../backoff.js';
import type { Clock } from '../../clock.js';
import { type HookdError, hookdError } from '../../errors.js';
import { channelTarget, type Permit } from '../isolation/index.js';
import type { ChatChannel } from '../ports.js';
import { deadline } from '../timeout.js';
import { attemptOf, type Failure, failureOf, noAnswerIn, type OnFailure, tryError } from './attempt.js';
import { OPEN_GATE, type TryGate } from './gate.js';

/** Tries of one message, at most. */
export const DELIVERY_ATTEMPTS = 4;
/** Without a `retry_after`, waits of 0.5, 1 and 2 s between the four tries. */
export const DELIVERY_BACKOFF: BackoffBounds = { minMs: 500, maxMs: 4_000 };
/** The longest `retry_after` honoured. */
export const MAX_RETRY_AFTER_MS = 60_000;
/** One try's time limit: a service that never answers is a failed try, not a stalled delivery. */
export const DELIVERY_TRY_SECONDS = 15;

export interface ChannelTryOptions {
  readonly clock: Clock;
  /** Aborts the delivery (the gateway stops): it rejects with SHUTTING_DOWN. */
  readonly signal?: AbortSignal;
  /** Told of every failed try as it fails. */
  readonly onFailure?: OnFailure;
  /** Where each try takes its slot (the runtime's slots and the channel's breaker); none: no wait. */
  readonly gate?: TryGate;
}

const shuttingDown = () => hookdError('SHUTTING_DOWN', { what: 'delivery' });

/**
 * Sends `text` as the channel's messages, in order, each tried up to four times
 * (docs/runtime.md#attempts): 429 (after its `retry_after`, at most 60 s), 5xx, network errors
 * and tries without an answer in 15 s are tried again; any other refusal rejects at once, and
 * the fourth failure with DELIVERY_GAVE_UP.
 */
export async function sendWithRetries(
  channel: ChatChannel,
  to: string,
  text: string,
  options: ChannelTryOptions,
): Promise<void> {
  for (const message of channel.split(text)) await sendOne(channel, to, message, options);
}

async function sendOne(channel: ChatChannel, to: string, text: string, options: ChannelTryOptions): Promise<void> {
  const { clock, signal = new AbortController().signal } = options;
  const gate = options.gate ?? OPEN_GATE;
  for (let n = 1; ; n++) {
    let failure: Failure;
    let permit: Permit;
    try {
      permit = await gate.acquire(channelTarget(channel.id), signal);
    } catch {
      throw shuttingDown();
    }
    const limit = deadline(DELIVERY_TRY_SECONDS, signal, clock);
    try {
      await channel.sendMessage(to, text, limit.signal);
      permit.release('ok');
      return;
    } catch (caught) {
      if (signal.aborted) {
        permit.release('cut');
        throw shuttingDown();
      }
      const err: unknown = limit.timedOut
        ? hookdError('CHANNEL_UNREACHABLE', { channel: channel.id, reason: noAnswerIn(DELIVERY_TRY_SECONDS * 1000) })
        : caught;
      failure = failureOf(err);
      permit.release(failure.transient ? 'failed' : 'refused', tryError(failure));
      options.onFailure?.(attemptOf(failure, 'delivery', n, clock.now()), { channel: channel.id });
      if (!failure.transient) throw err;
      if (n >= DELIVERY_ATTEMPTS)
        throw hookdError('DELIVERY_GAVE_UP', { reason: (err as HookdError).message, attempts: n }, { cause: err });
    } finally {
      limit.done();
    }
    const waitMs =
      failure.retryAfterMs === undefined
        ? backoffMs(n - 1, DELIVERY_BACKOFF)
        : Math.min(failure.retryAfterMs, MAX_RETRY_AFTER_MS);
    await clock.sleep(waitMs, signal).catch(() => {
      throw shuttingDown();
    });
  }
}
