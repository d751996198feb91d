import { quotedValue } from './schema-errors.js';
import { didYouMean } from './suggest.js';

/**
 * The keys of one entry a module owns (a channel kind's, a provider API's) as a flat JSON Schema
 * fragment: strings (minLength, pattern), integers (minimum, maximum), booleans, and objects of
 * strings, each with an optional default and description. Checked by `checkKeys` without a schema
 * compiler, so that a gateway with channels starts as fast as one without.
 */
export interface KeySchema {
  readonly type: 'string' | 'integer' | 'boolean' | 'object';
  readonly description?: string;
  readonly default?: unknown;
  readonly minLength?: number;
  readonly pattern?: string;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly additionalProperties?: { readonly type: 'string' };
  /** A credential: a problem with it never quotes its value. */
  readonly writeOnly?: boolean;
}

export interface KeysSchema {
  readonly properties: Readonly<Record<string, KeySchema>>;
  readonly required?: readonly string[];
}

/**
 * A URL hookd sends requests to (a provider's `baseUrl`, a channel's, the mail watch's
 * `hookUrl`): http(s), with no `user:password@`, which its HTTP client leaves out: the request
 * would go without them and be refused, and nothing would say why. Credentials go in the keys
 * made for them (`apiKey`, `botToken`, `headers`).
 */
export const HTTP_URL = {
  type: 'string',
  // The authority ends at the first `/`, `?`, `#` or `\` (a URL parser reads `\` as `/`).
  pattern: '^https?://(?![^/?#\\\\]*@)',
  description: 'an http(s) URL without user:password@ (hookd would leave them out)',
} as const;

const typeName = (value: unknown) => (value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value);

/** The problem with one value, if any, in the words the config's schema errors use. */
function problemOf(value: unknown, key: KeySchema): string | undefined {
  const expected = key.description ?? key.type;
  if (key.type === 'integer' ? !Number.isInteger(value) : typeName(value) !== key.type)
    return `expected ${expected}, got ${typeName(value)}`;
  if (typeof value === 'string') {
    if (key.minLength !== undefined && value.length < key.minLength)
      return `expected ${key.description ?? 'a non-empty string'}`;
    if (key.pattern !== undefined && !new RegExp(key.pattern, 'u').test(value))
      return `expected ${key.description ?? `a value that matches ${key.pattern}`}${key.writeOnly ? '' : `, got ${quotedValue(value)}`}`;
  }
  if (typeof value === 'number') {
    if (key.minimum !== undefined && value < key.minimum) return `expected a value that must be >= ${key.minimum}`;
    if (key.maximum !== undefined && value > key.maximum) return `expected a value that must be <= ${key.maximum}`;
  }
  if (key.type === 'object' && key.additionalProperties) {
    const wrong = Object.entries(value as object).find(([, item]) => typeof item !== 'string');
    if (wrong) return `expected strings, got ${typeName(wrong[1])} at ${wrong[0]}`;
  }
  return undefined;
}

/**
 * Checks `entry` (an object at `path`) against `schema`: every problem as a `path: message` line,
 * and the entry with the defaults of its missing keys filled in.
 */
export function checkKeys(
  entry: Readonly<Record<string, unknown>>,
  schema: KeysSchema,
  path: string,
): { readonly problems: string[]; readonly entry: Record<string, unknown> } {
  const problems: string[] = [];
  const filled: Record<string, unknown> = { ...entry };
  const known = Object.keys(schema.properties);
  for (const [name, value] of Object.entries(entry)) {
    const key = schema.properties[name];
    if (!key) {
      const guess = didYouMean(name, known);
      problems.push(
        `${path}.${name}: unknown key${guess === undefined ? '' : ` (did you mean ${JSON.stringify(guess)}?)`}`,
      );
      continue;
    }
    const problem = problemOf(value, key);
    if (problem !== undefined) problems.push(`${path}.${name}: ${problem}`);
  }
  for (const name of schema.required ?? []) if (entry[name] === undefined) problems.push(`${path}.${name}: required`);
  for (const [name, key] of Object.entries(schema.properties))
    if (filled[name] === undefined && key.default !== undefined) filled[name] = key.default;
  return { problems, entry: filled };
}
