/**
 * The keys of a `hooks.presets` entry that are the operator's, not a preset's options
 * (docs/presets.md): what it is, where it answers, its secret, and the values that override
 * the preset's own.
 */

/** The keys of a `hooks.presets` entry that override a preset's values: the operator's own. */
export const OVERRIDES = [
  'sessionKey',
  'model',
  'thinking',
  'deliver',
  'channel',
  'to',
  'allowUnsafeExternalContent',
  'maxBodyBytes',
  'maxConcurrent',
  'timeoutSeconds',
] as const;

/** The keys every `hooks.presets` entry may carry. */
export const COMMON_KEYS = ['name', 'secret', 'path', ...OVERRIDES] as const;

/** The entry's key that always holds its senders' secret. */
export const SECRET_KEY = 'secret';

/** True for an option's schema marked `secret: true`: its value is a secret (docs/presets.md#the-format). */
export function isSecretOption(schema: unknown): boolean {
  return schema !== null && typeof schema === 'object' && (schema as { secret?: unknown }).secret === true;
}

/**
 * Why `verify.secretOption` may not name `option` of a manifest whose options declare
 * `properties`; undefined when it may: `secret` (the entry's own), or an option marked
 * `secret: true` that is not one of the entry's own keys (`name` is public).
 */
export function secretOptionProblem(
  option: string,
  properties: Readonly<Record<string, unknown>> | undefined,
): string | undefined {
  if (option === SECRET_KEY) return undefined;
  if ((COMMON_KEYS as readonly string[]).includes(option))
    return `${JSON.stringify(option)} is a key of the operator's entry, not a secret; name "secret", or an option marked secret: true`;
  const schema = properties && Object.hasOwn(properties, option) ? properties[option] : undefined;
  if (isSecretOption(schema)) return undefined;
  return `${JSON.stringify(option)} is not an option the manifest declares as a secret; name "secret", or mark the option secret: true in options.properties`;
}
