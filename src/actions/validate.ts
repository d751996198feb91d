import {
  type ContentSource,
  DEFAULT_SESSION_KEY_PREFIXES,
  LAST_CHANNEL,
  MAIN_SESSION,
  THINKING_LEVELS,
  type ThinkingLevel,
  WAKE_MODES,
  type WakeMode,
} from '../action-shape.js';
import { hookdError } from '../errors.js';
import { newId } from '../ids.js';
import type { ModelCatalog } from './models.js';
import type { AgentAction, WakeAction } from './types.js';

/** What validation needs besides the body. */
export interface ActionOptions {
  readonly models: ModelCatalog;
  /** The configured channels' ids (`channels.<id>`); none when absent. */
  readonly channels?: ReadonlySet<string>;
  /** `hooks.allowedSessionKeyPrefixes` (default `hook:`), compared case-insensitively. */
  readonly sessionKeyPrefixes?: readonly string[];
  /** Set by a mapping; the built-in endpoints always wrap. */
  readonly allowUnsafeExternalContent?: boolean;
  readonly contentSource?: ContentSource;
}

/** The longest run a request may ask for (setTimeout's range is ~24 days; a day is plenty). */
export const MAX_TIMEOUT_SECONDS = 86_400;
const MAX_SESSION_KEY = 256;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters (C0, DEL, C1) are what it rejects
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

type Body = Readonly<Record<string, unknown>>;

/**
 * Agent actions whose session key hookd made (the request named none), with the id it was made
 * from: their run takes that id, so that its key is `hook:<runId>` and it can tell it starts
 * its session (startsItsSession).
 */
const madeKeyIds = new WeakMap<AgentAction, string>();

/** The prefix of a session key hookd makes, `hook:<runId>`: its first run's id follows it. */
export const MADE_KEY_PREFIX = 'hook:';

/** The id a run of `action` takes: the one its made session key ends in, else a new one. */
export const runIdFor = (action: AgentAction): string => madeKeyIds.get(action) ?? newId();

/**
 * Whether hookd made the run's session key for it. Runs of one key run in arrival order
 * (docs/runtime.md#agent-runs), and no request could name the key before this run's answer
 * gave it out: its session holds nothing before its turn, so no history is read.
 */
export const startsItsSession = (run: { readonly id: string; readonly sessionKey: string }): boolean =>
  // Compared without building the key: the run pump asks it each time it looks at a waiting run.
  run.sessionKey.length === MADE_KEY_PREFIX.length + run.id.length &&
  run.sessionKey.startsWith(MADE_KEY_PREFIX) &&
  run.sessionKey.endsWith(run.id);

/** Validates a `/hooks/wake` body (docs/http.md#post-hookswake); throws a 400 HookdError naming the field. */
export function parseWakeBody(
  body: unknown,
  options: Pick<ActionOptions, 'allowUnsafeExternalContent' | 'contentSource'> = {},
): WakeAction {
  const b = asObject(body);
  const text = requiredText(b, 'text');
  return {
    kind: 'wake',
    text,
    mode: optionalEnum(b, 'mode', WAKE_MODES) ?? 'now',
    allowUnsafeExternalContent: options.allowUnsafeExternalContent ?? false,
    contentSource: options.contentSource ?? 'webhook',
  };
}

/**
 * Validates a `/hooks/agent` body (docs/http.md#post-hooksagent); throws a 400 HookdError naming the field.
 * `mappingId`: the mapping that made it (none for `/hooks/agent`).
 */
export function parseAgentBody(body: unknown, options: ActionOptions, mappingId?: string): AgentAction {
  const b = asObject(body);
  const message = requiredText(b, 'message');
  const name = optionalString(b, 'name');
  const sessionKey = optionalString(b, 'sessionKey');
  if (sessionKey !== undefined) checkSessionKey(sessionKey, options.sessionKeyPrefixes ?? DEFAULT_SESSION_KEY_PREFIXES);
  const wakeMode: WakeMode = optionalEnum(b, 'wakeMode', WAKE_MODES) ?? 'now';
  const deliver = optionalBoolean(b, 'deliver') ?? true;
  const channel = b.channel ?? LAST_CHANNEL;
  if (typeof channel !== 'string' || (channel !== LAST_CHANNEL && !options.channels?.has(channel)))
    throw invalid('channel', expectedChannel(options.channels));
  const to = optionalString(b, 'to');
  if (to !== undefined && to.trim() === '') throw invalid('to', 'a non-empty recipient');
  const modelInput = optionalString(b, 'model');
  if (modelInput !== undefined && modelInput.trim() === '') throw invalid('model', 'provider/model or an alias');
  const thinking: ThinkingLevel | undefined = optionalEnum(b, 'thinking', THINKING_LEVELS);
  const timeoutSeconds = optionalTimeout(b);
  const madeId = sessionKey === undefined ? newId() : undefined;
  // Every field named (absent ones undefined): one shape for every action, cheap to read.
  const action: AgentAction = {
    kind: 'agent',
    message,
    name,
    sessionKey: sessionKey ?? `${MADE_KEY_PREFIX}${madeId}`,
    wakeMode,
    deliver,
    channel,
    to,
    model: modelInput === undefined ? options.models.defaultModel : options.models.resolve(modelInput),
    thinking,
    timeoutSeconds,
    allowUnsafeExternalContent: options.allowUnsafeExternalContent ?? false,
    contentSource: options.contentSource ?? 'webhook',
    mappingId,
  };
  if (madeId !== undefined) madeKeyIds.set(action, madeId);
  return action;
}

/** What `channel` takes (docs/channels.md): `last`, or one of the configured channels' ids, listed. */
export function expectedChannel(ids: ReadonlySet<string> | undefined): string {
  const list = [...(ids ?? [])];
  return list.length === 0
    ? `${LAST_CHANNEL} (no channel is configured)`
    : `one of ${[LAST_CHANNEL, ...list].join(', ')}`;
}

/**
 * A run's own session key (docs/security.md#session-keys): 1 to 256 characters without control characters,
 * starting with an allowed prefix, and never the main session.
 */
function checkSessionKey(key: string, prefixes: readonly string[]): void {
  if (key.length > MAX_SESSION_KEY || key.length === 0 || CONTROL.test(key)) {
    throw invalid('sessionKey', `a string of 1 to ${MAX_SESSION_KEY} characters without control characters`);
  }
  const lower = key.toLowerCase();
  if (lower === MAIN_SESSION || !prefixes.some((prefix) => lower.startsWith(prefix.toLowerCase()))) {
    const allowed = prefixes.join(', ');
    throw invalid('sessionKey', `a key starting with ${allowed} (the main session is reached only through wake)`);
  }
}

function asObject(body: unknown): Body {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw hookdError('INVALID_BODY', { problem: 'not-an-object' });
  }
  return body as Body;
}

function invalid(field: string, expected: string) {
  return hookdError('INVALID_FIELD', { field, expected });
}

function requiredText(b: Body, field: 'text' | 'message'): string {
  const value = b[field];
  if (value !== undefined && value !== null && typeof value !== 'string') throw invalid(field, 'a string');
  if (typeof value !== 'string' || value.trim() === '') {
    throw hookdError(field === 'text' ? 'TEXT_REQUIRED' : 'MESSAGE_REQUIRED');
  }
  return value;
}

function optionalString(b: Body, field: string): string | undefined {
  const value = b[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw invalid(field, 'a string');
  return value;
}

function optionalBoolean(b: Body, field: string): boolean | undefined {
  const value = b[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw invalid(field, 'true or false');
  return value;
}

function optionalEnum<T extends string>(b: Body, field: string, allowed: readonly T[]): T | undefined {
  const value = b[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    throw invalid(field, `one of ${allowed.join(', ')}`);
  }
  return value as T;
}

function optionalTimeout(b: Body): number | undefined {
  const value = b.timeoutSeconds;
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || value > MAX_TIMEOUT_SECONDS) {
    throw invalid('timeoutSeconds', `a number of seconds greater than 0 and at most ${MAX_TIMEOUT_SECONDS}`);
  }
  return Math.ceil(value);
}
