import type { KeysSchema } from '../config/index.js';
import { MAX_ANSWER_DEPTH, nestedDeeperThan } from '../json-depth.js';
import type { DeliveryContext } from '../runtime/index.js';

/**
 * What a channel kind is (docs/channels.md#adding-a-kind): one module, registered by name in
 * registry.ts, that owns its config keys, its one try per call, the classification of its
 * failures for the runtime's retries, and the credentials it masks. Nothing else names a kind.
 */

/** One message as a kind sends it. */
export interface OutgoingMessage {
  /** The recipient (`''` when the delivery names none and the kind needs none). */
  readonly to: string;
  /** One part of a reply, as the kind's `split` made it. */
  readonly text: string;
  /** The same across the tries of one delivery of this part (a signed webhook's message id). */
  readonly id: string;
  readonly context: DeliveryContext;
}

/** What a kind gets besides its entry. */
export interface KindEnv {
  /** The channel's id (`channels.<id>`): what its errors name. */
  readonly id: string;
  /** Masks the entry's credentials in a text (a URL in a network error holds a token). */
  readonly mask: (text: string) => string;
  /** Wall-clock milliseconds (signature timestamps). */
  readonly now: () => number;
}

/** A configured channel as its kind makes it. */
export interface KindSender {
  /** A reply as the messages the service takes, in order. */
  split(text: string): string[];
  /** One try: resolves when the service took the message, else rejects with a coded CHANNEL_ error. */
  send(message: OutgoingMessage, signal: AbortSignal): Promise<void>;
}

/**
 * A channel kind. `Entry` is its `channels.<id>` entry as its keys' schema checked it (defaults
 * filled in); the registry erases it.
 */
export interface ChannelKind<Entry = never> {
  /** Its own keys (a flat JSON Schema fragment), beside `kind`, `defaultTo` and `maxConcurrent`. */
  readonly keys: KeysSchema;
  /** Rules between keys the schema cannot say, as `key: message` lines (keys of the entry). */
  problems?(entry: Entry): string[];
  /** False when a delivery needs no recipient (the service's URL names one place); default true. */
  needsRecipient?(entry: Entry): boolean;
  /** The entry's credentials, masked wherever a text the kind makes could hold them. */
  secrets(entry: Entry): readonly (string | undefined)[];
  create(entry: Entry, env: KindEnv): KindSender;
}

/** Gives a kind's module its type while keeping its entry's (the registry holds kinds of any entry). */
export function defineChannelKind<Entry>(kind: ChannelKind<Entry>): ChannelKind<unknown> {
  return kind as unknown as ChannelKind<unknown>;
}

/**
 * Reads a JSON answer, `{}` when it is not JSON or nests deeper than MAX_ANSWER_DEPTH (parsing 1 MiB
 * of brackets holds the thread 100 ms); the status then says what happened.
 */
export function jsonOf<T extends object>(raw: string): Partial<T> {
  if (nestedDeeperThan(raw, MAX_ANSWER_DEPTH)) return {};
  try {
    const parsed: unknown = JSON.parse(raw);
    return parsed !== null && typeof parsed === 'object' ? (parsed as Partial<T>) : {};
  } catch {
    return {};
  }
}

/** A `Retry-After`-style number of seconds in milliseconds, when it is one. */
export function secondsToMs(raw: unknown): number | undefined {
  if (raw === undefined || raw === null || (typeof raw === 'string' && raw.trim() === '')) return undefined;
  const seconds = Number(raw);
  return Number.isFinite(seconds) && seconds >= 0 ? Math.ceil(seconds * 1000) : undefined;
}

/** The path of a URL whose path is its credential (an incoming webhook's), when it has one. */
export function pathOf(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  const path = URL.canParse(url) ? new URL(url).pathname : '';
  return path.length > 1 ? path : undefined;
}
