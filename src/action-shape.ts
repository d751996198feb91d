/**
 * The shape of a wake or agent action, declared once: its enums and the fields a template
 * or a transform may set. The config schema, the transform authors' types, the mapping
 * compiler (which fields are templates) and the merge of a transform's result (which fields
 * it may return) all derive from here.
 */

/** The main session's key (docs/runtime.md#wake--main-session--heartbeat): reached only through wake, never as a run's `sessionKey`. */
export const MAIN_SESSION = 'main';

/** Session keys a request or a mapping may name start with one of these unless configured (docs/security.md#session-keys). */
export const DEFAULT_SESSION_KEY_PREFIXES = ['hook:'] as const;

export const ACTION_KINDS = ['wake', 'agent'] as const;
export type ActionKind = (typeof ACTION_KINDS)[number];

export const WAKE_MODES = ['now', 'next-heartbeat'] as const;
export type WakeMode = (typeof WAKE_MODES)[number];

export const THINKING_LEVELS = ['off', 'minimal', 'low', 'medium', 'high', 'xhigh'] as const;
export type ThinkingLevel = (typeof THINKING_LEVELS)[number];

/** The `channel` that names the main session's last route; any other value is a configured channel's id (docs/channels.md). */
export const LAST_CHANNEL = 'last';

/** The `Source:` line of the external-content safety wrapper (docs/security.md#untrusted-content). */
export const CONTENT_SOURCES = ['webhook', 'email'] as const;
export type ContentSource = (typeof CONTENT_SOURCES)[number];

interface FieldSpec {
  readonly type: 'string' | 'boolean' | 'number' | 'enum';
  readonly values?: readonly string[];
  /** The mapping key whose mustache template renders this field, when one does. */
  readonly template?: string;
}

/**
 * Every field of an action as a template or a transform sets it (docs/mappings.md): the one list.
 * A wake reads `text` (else `message`) and `mode` (else `wakeMode`); an agent the rest.
 */
export const ACTION_FIELDS = {
  kind: { type: 'enum', values: ACTION_KINDS },
  text: { type: 'string', template: 'textTemplate' },
  mode: { type: 'enum', values: WAKE_MODES },
  message: { type: 'string', template: 'messageTemplate' },
  name: { type: 'string', template: 'name' },
  sessionKey: { type: 'string', template: 'sessionKey' },
  wakeMode: { type: 'enum', values: WAKE_MODES },
  deliver: { type: 'boolean' },
  channel: { type: 'string', template: 'channel' },
  to: { type: 'string', template: 'to' },
  model: { type: 'string', template: 'model' },
  thinking: { type: 'enum', values: THINKING_LEVELS, template: 'thinking' },
  timeoutSeconds: { type: 'number' },
} as const satisfies Record<string, FieldSpec>;

export type ActionField = keyof typeof ACTION_FIELDS;

type ValueOf<F> = F extends { readonly type: 'enum'; readonly values: readonly (infer V)[] }
  ? V
  : F extends { readonly type: 'string' }
    ? string
    : F extends { readonly type: 'boolean' }
      ? boolean
      : number;

/** Each field with the type of its value (`mode: 'now' | 'next-heartbeat'`, `deliver: boolean`, …). */
export type ActionFieldValues = { -readonly [K in ActionField]: ValueOf<(typeof ACTION_FIELDS)[K]> };

/** A field rendered from a mapping's template, with the mapping key of that template. */
export type TemplatedField = {
  [K in ActionField]: (typeof ACTION_FIELDS)[K] extends { readonly template: infer T extends string }
    ? { readonly field: K; readonly template: T }
    : never;
}[ActionField];

/** The fields rendered from a mapping's templates, in declaration order. */
export const TEMPLATED_FIELDS = (Object.keys(ACTION_FIELDS) as ActionField[]).flatMap((field) => {
  const template = (ACTION_FIELDS[field] as FieldSpec).template;
  return template === undefined ? [] : [{ field, template }];
}) as readonly TemplatedField[];
