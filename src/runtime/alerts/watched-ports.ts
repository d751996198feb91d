import { type Clock, systemClock } from '../../clock.js';
import { isHookdError } from '../../errors.js';
import { DELIVERY_TRY_SECONDS, failureOf, tryError, unanswered } from '../attempts/index.js';
import type { ChatChannel, ModelRouter } from '../ports.js';
import { cutUnanswered, isTimeUp } from '../timeout.js';

/** What a watched model port reports of each try (docs/operations.md#alerts). */
export interface ModelTries {
  succeeded(ref: string): void;
  /** `error`: the try's code, status or network error, never the server's answer. */
  failed(ref: string, error: string): void;
}

/**
 * `models`, reporting each try. A refusal of the request's size says nothing of the server's
 * health, and a call cut sooner than half its time limit (the run's), by a shutdown or by a
 * cancel nothing at all: neither is reported. A call the limit cut later went unanswered that
 * long: a failure, as the retry loop counts it (cutUnanswered).
 */
export function watchedModels(
  models: ModelRouter,
  tries: ModelTries,
  clock: Pick<Clock, 'monotonic'> = systemClock,
): ModelRouter {
  return {
    async complete(ref, request) {
      const startedAt = clock.monotonic();
      try {
        const reply = await models.complete(ref, request);
        tries.succeeded(ref);
        return reply;
      } catch (err) {
        const { signal } = request;
        const triedMs = clock.monotonic() - startedAt;
        if (cutUnanswered(signal, triedMs)) tries.failed(ref, tryError(unanswered('MODEL_UNREACHABLE', triedMs)));
        else if (!signal.aborted && !isHookdError(err, 'MODEL_CONTEXT_EXCEEDED'))
          tries.failed(ref, tryError(failureOf(err)));
        throw err;
      }
    },
  };
}

/** `channels`, telling `failed` of each failed try (one its time limit cut too, not one a shutdown cut) with its channel's id. */
export function watchedChannels(
  channels: ReadonlyMap<string, ChatChannel>,
  failed: (channel: string, error: string) => void,
): ReadonlyMap<string, ChatChannel> {
  const watched = new Map<string, ChatChannel>();
  for (const [id, channel] of channels) watched.set(id, watchedChannel(id, channel, failed));
  return watched;
}

/** One channel, watched: the views it makes for one delivery (`about`) are watched too. */
function watchedChannel(
  id: string,
  channel: ChatChannel,
  failed: (channel: string, error: string) => void,
): ChatChannel {
  const { about } = channel;
  return {
    id: channel.id,
    ...(channel.defaultTo === undefined ? {} : { defaultTo: channel.defaultTo }),
    ...(channel.needsRecipient === undefined ? {} : { needsRecipient: channel.needsRecipient }),
    split: (text) => channel.split(text),
    async sendMessage(to, text, signal) {
      try {
        await channel.sendMessage(to, text, signal);
      } catch (err) {
        // The try's own time limit cut it: unanswered, a failure (a shutdown's cut is none).
        if (isTimeUp(signal)) failed(id, tryError(unanswered('CHANNEL_UNREACHABLE', DELIVERY_TRY_SECONDS * 1000)));
        else if (!signal.aborted) failed(id, tryError(failureOf(err)));
        throw err;
      }
    },
    ...(about ? { about: (context) => watchedChannel(id, about.call(channel, context), failed) } : {}),
  };
}
