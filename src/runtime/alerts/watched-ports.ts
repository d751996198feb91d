import { isHookdError } from '../../errors.js';
import { failureOf, tryError } from '../attempts/index.js';
import type { ChatChannel, ModelRouter } from '../ports.js';

/** What a watched model port reports of each try (docs/operations.md#alerts). */
export interface ModelTries {
  succeeded(ref: string): void;
  /** `error`: the try's code, status or network error, never the server's answer. */
  failed(ref: string, error: string): void;
}

/**
 * `models`, reporting each try. A refusal of the request's size says nothing of the server's
 * health, and a cut call (a run's time limit, a shutdown) nothing at all: neither is reported.
 */
export function watchedModels(models: ModelRouter, tries: ModelTries): ModelRouter {
  return {
    async complete(ref, request) {
      try {
        const reply = await models.complete(ref, request);
        tries.succeeded(ref);
        return reply;
      } catch (err) {
        if (!request.signal.aborted && !isHookdError(err, 'MODEL_CONTEXT_EXCEEDED'))
          tries.failed(ref, tryError(failureOf(err)));
        throw err;
      }
    },
  };
}

/** `channels`, telling `failed` of each failed try (not of one cut off) with its channel's id. */
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
        if (!signal.aborted) failed(id, tryError(failureOf(err)));
        throw err;
      }
    },
    ...(about ? { about: (context) => watchedChannel(id, about.call(channel, context), failed) } : {}),
  };
}
