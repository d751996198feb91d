import { createHash } from 'node:crypto';
import { type ErrorCode, type HookdError, hookdError, isHookdError } from '../errors.js';
import { newId } from '../ids.js';
import type { ChatChannel, DeliveryContext } from '../runtime/index.js';
import { maskerOf } from '../secret-text.js';
import { EXCERPT_CHARS } from './http-try.js';
import type { ChannelKind, KindEnv } from './kind.js';

/** What a configured channel is besides its kind's entry. */
export interface ChannelOptions {
  /** `channels.<id>`. */
  readonly id: string;
  readonly defaultTo?: string;
  /** Wall-clock milliseconds (the gateway's clock). */
  readonly now?: () => number;
}

/** `err` with no credential in it: a coded error with its texts masked, anything else CHANNEL_UNREACHABLE. */
function cleaned(err: unknown, env: KindEnv): HookdError {
  if (!isHookdError(err)) {
    const reason = env.mask(err instanceof Error ? err.message : String(err)).slice(0, EXCERPT_CHARS);
    return hookdError('CHANNEL_UNREACHABLE', { channel: env.id, reason });
  }
  const params: Record<string, unknown> = { ...(err.params as object) };
  for (const [key, value] of Object.entries(params))
    if (typeof value === 'string' && key !== 'channel') params[key] = env.mask(value);
  // The cause is dropped: a library's error can quote what was sent, credentials included.
  return hookdError(err.code as ErrorCode, params as never);
}

/**
 * The runtime's ChatChannel for one configured channel of `kind` (docs/channels.md): its
 * credentials masked in whatever a try rejects with, and a message id per part that stays the
 * same across the retries of one delivery (`about`).
 */
export function channelOf(kind: ChannelKind<unknown>, entry: unknown, options: ChannelOptions): ChatChannel {
  const env: KindEnv = { id: options.id, mask: maskerOf(kind.secrets(entry)), now: options.now ?? Date.now };
  const sender = kind.create(entry, env);
  const needsRecipient = kind.needsRecipient?.(entry) ?? true;
  const view = (context: DeliveryContext, idOf: (text: string) => string): ChatChannel => ({
    id: options.id,
    ...(options.defaultTo === undefined ? {} : { defaultTo: options.defaultTo }),
    needsRecipient,
    split: (text) => sender.split(text),
    async sendMessage(to, text, signal) {
      try {
        await sender.send({ to, text, id: idOf(text), context }, signal);
      } catch (err) {
        throw signal.aborted ? err : cleaned(err, env);
      }
    },
    about(next) {
      const owner = next.runId === undefined ? next.alert && `alert:${next.alert.id}` : `run:${next.runId}`;
      if (owner !== undefined) return view(next, (text) => partId(options.id, owner, text));
      const ids = new Map<string, string>();
      return view(next, (text) => {
        const id = ids.get(text) ?? newId();
        ids.set(text, id);
        return id;
      });
    },
  });
  return view({}, () => newId());
}

/**
 * The id of a part of a run's reply or of an alert (docs/channels.md): the same however often
 * it is sent (a retry, a restart that delivers it again, a redelivery), so that a receiver can
 * drop a repeat. A UUID's form, version 8, from the SHA-256 of the channel, owner and text.
 */
export function partId(channel: string, owner: string, text: string): string {
  const hex = createHash('sha256').update(`${channel}\n${owner}\n`).update(text).digest('hex');
  const variant = ((Number.parseInt(hex[16] as string, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
