import { type Config, checkKeys, configInvalid, didYouMean, type KeysSchema } from '../config/index.js';
import type { ChatChannel } from '../runtime/index.js';
import { channelOf } from './channel.js';
import { chatnet } from './chatnet.js';
import { discord } from './discord.js';
import { email } from './email.js';
import type { ChannelKind } from './kind.js';
import { slack } from './slack.js';
import { telegram } from './telegram.js';
import { webhook } from './webhook.js';

/**
 * Every channel kind, by the name `channels.<id>.kind` gives (docs/channels.md). Adding a kind is
 * its module, its line here, its entry in the channel contract suite and its row in the docs.
 */
export const CHANNEL_KINDS: Readonly<Record<string, ChannelKind<unknown>>> = {
  chatnet,
  telegram,
  slack,
  discord,
  email,
  webhook,
};

/** One configured channel as its kind's keys checked it (their defaults filled in). */
interface CheckedChannel {
  readonly kind: ChannelKind<unknown>;
  readonly entry: Readonly<Record<string, unknown>>;
}

type ChannelsConfig = Pick<Config, 'channels' | 'hooks'> & { readonly file?: string };

const kindNames = () => Object.keys(CHANNEL_KINDS);

/** The kind of `channels.<id>`: its `kind`, else its id when that names a kind (`channels.chatnet`). */
function kindOf(id: string, entry: { readonly kind?: string }): { name?: string; problem?: string } {
  const name = entry.kind ?? (Object.hasOwn(CHANNEL_KINDS, id) ? id : undefined);
  if (name !== undefined && Object.hasOwn(CHANNEL_KINDS, name)) return { name };
  const known = `one of ${kindNames().join(', ')}`;
  if (name === undefined) return { problem: `channels.${id}.kind: required (${known})` };
  const guess = didYouMean(name, kindNames());
  const hint = guess === undefined ? '' : ` (did you mean ${JSON.stringify(guess)}?)`;
  return { problem: `channels.${id}.kind: expected ${known}, got ${JSON.stringify(name)}${hint}` };
}

/** The keys of an entry of `kind`: the ones every channel has, and the kind's own. */
function keysOf(kind: ChannelKind<unknown>): KeysSchema {
  return {
    required: kind.keys.required ?? [],
    properties: {
      kind: { type: 'string' },
      defaultTo: { type: 'string', minLength: 1 },
      maxConcurrent: { type: 'integer', minimum: 1 },
      ...kind.keys.properties,
    },
  };
}

/**
 * Checks every `channels.<id>` against its kind (docs/channels.md): the kind is known, its keys
 * are its module's, and what the schema cannot say; and that alerts going through a channel whose
 * kind needs a recipient have one. Problems are `path: message` lines, like the config's.
 */
export function checkChannels(config: ChannelsConfig): {
  readonly channels: ReadonlyMap<string, CheckedChannel>;
  readonly problems: readonly string[];
} {
  const channels = new Map<string, CheckedChannel>();
  const problems: string[] = [];
  for (const [id, raw] of Object.entries(config.channels)) {
    if (!raw) continue;
    const { name, problem } = kindOf(id, raw);
    if (name === undefined) {
      problems.push(problem as string);
      continue;
    }
    const kind = CHANNEL_KINDS[name] as ChannelKind<unknown>;
    const checked = checkKeys(raw, keysOf(kind), `channels.${id}`);
    const own =
      checked.problems.length > 0
        ? checked.problems
        : (kind.problems?.(checked.entry) ?? []).map((p) => `channels.${id}.${p}`);
    problems.push(...own);
    if (own.length === 0) channels.set(id, { kind, entry: checked.entry });
  }
  problems.push(...alertRecipientProblems(config, channels));
  return { channels, problems };
}

/** Alerts on, through a channel whose kind needs a recipient, without one: a problem. */
function alertRecipientProblems(config: ChannelsConfig, channels: ReadonlyMap<string, CheckedChannel>): string[] {
  const { alerts } = config.hooks;
  const id = alerts.channel;
  const checked = id === undefined ? undefined : channels.get(id);
  if (!alerts.enabled || id === undefined || !checked || alerts.to !== undefined) return [];
  if (checked.entry.defaultTo !== undefined || checked.kind.needsRecipient?.(checked.entry) === false) return [];
  return [`hooks.alerts.to: required when alerts are on and channels.${id} has no defaultTo`];
}

/** The problems of `channels` and of the alerts' recipient (`hookd check` lists them with the rest). */
export function channelProblems(config: ChannelsConfig): readonly string[] {
  return checkChannels(config).problems;
}

/** The configured channels by id, in the config's order; throws CONFIG_INVALID naming every problem. */
export function createChannels(
  config: ChannelsConfig,
  options: { readonly now?: () => number } = {},
): ReadonlyMap<string, ChatChannel> {
  const { channels, problems } = checkChannels(config);
  if (problems.length > 0) throw configInvalid(problems, config.file);
  const made = new Map<string, ChatChannel>();
  for (const [id, { kind, entry }] of channels) {
    const defaultTo = typeof entry.defaultTo === 'string' ? { defaultTo: entry.defaultTo } : {};
    made.set(id, channelOf(kind, entry, { id, ...defaultTo, ...(options.now ? { now: options.now } : {}) }));
  }
  return made;
}

/**
 * Deliveries each channel makes at once, at most, by id, where configured
 * (`channels.<id>.maxConcurrent`); the runtime's default for the others (docs/runtime.md#fault-isolation).
 */
export function channelLimits(config: Pick<Config, 'channels'>): ReadonlyMap<string, number> {
  return new Map(
    Object.entries(config.channels).flatMap(([id, entry]) =>
      entry?.maxConcurrent === undefined ? [] : [[id, entry.maxConcurrent] as const],
    ),
  );
}
