import { Ajv, type Options, type ValidateFunction } from 'ajv';
import { RE2JS } from 're2js';
import { hookdError } from '../errors.js';

type RegExpEngine = NonNullable<NonNullable<Options['code']>['regExp']>;

/**
 * JSON Schemas that a config or a plugin supplies (a mapping's payload `schema`, a preset's
 * `options`), compiled with every `pattern` and `patternProperties` key on RE2, a linear-time
 * engine (docs/security.md#regular-expressions): `^(a+)+$` cannot hold the event loop, and a
 * pattern RE2 cannot run (a backreference, a lookaround) is refused when the schema compiles.
 */
const linearRegExp: RegExpEngine = Object.assign(
  (pattern: string) => {
    const re = compileLinear(pattern);
    if (typeof re === 'string')
      throw hookdError('CONFIG_PROBLEM', { problem: `pattern ${JSON.stringify(pattern)}: ${re}` });
    // ajv keys compiled patterns by their text: two patterns must not share one.
    return { test: (s: string) => re.matcher(s).find(), toString: () => `re2:${pattern}` };
  },
  { code: 're2js' },
);

/** The pattern compiled for RE2, or why it cannot be. */
function compileLinear(pattern: string): RE2JS | string {
  try {
    return RE2JS.compile(RE2JS.translateRegExp(pattern));
  } catch (err) {
    const reason = (err as Error).message.replace(/^error parsing regexp: /, '');
    return `${reason} (hookd runs patterns on a linear-time engine: no backreferences, no lookahead or lookbehind)`;
  }
}

/** Keywords whose values are data, not schemas: a `pattern` key inside them is not a pattern. */
const DATA_KEYWORDS = new Set(['enum', 'const', 'default', 'examples', 'description', 'title']);

/**
 * Every pattern of a schema RE2 cannot run, as `pointer: why` (the JSON pointer of the
 * keyword in the schema), so that the config error says where it is.
 */
export function unsafePatterns(schema: unknown, pointer = ''): string[] {
  if (Array.isArray(schema)) return schema.flatMap((item, i) => unsafePatterns(item, `${pointer}/${i}`));
  if (schema === null || typeof schema !== 'object') return [];
  const found: string[] = [];
  for (const [key, value] of Object.entries(schema)) {
    const at = `${pointer}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;
    if (key === 'pattern' && typeof value === 'string') {
      const re = compileLinear(value);
      if (typeof re === 'string') found.push(`${at}: ${JSON.stringify(value)}: ${re}`);
    } else if (key === 'patternProperties' && value !== null && typeof value === 'object') {
      for (const name of Object.keys(value)) {
        const re = compileLinear(name);
        if (typeof re === 'string') found.push(`${at}: ${JSON.stringify(name)}: ${re}`);
      }
    }
    if (!DATA_KEYWORDS.has(key)) found.push(...unsafePatterns(value, at));
  }
  return found;
}

/** An ajv instance for supplied schemas: these options, and RE2 for every pattern. */
export function createSchemaAjv(options: Options = {}): Ajv {
  return new Ajv({ strict: false, ...options, code: { ...options.code, regExp: linearRegExp } });
}

/**
 * Compiles a supplied schema; throws an Error saying what is wrong: each pattern RE2 cannot
 * run (`/properties/id/pattern: "(a)\\1": …`), or ajv's reason.
 */
export function compileSchema(ajv: Ajv, schema: object): ValidateFunction {
  const unsafe = unsafePatterns(schema);
  if (unsafe.length > 0)
    throw hookdError('CONFIG_PROBLEM', { problem: `a pattern that cannot be run safely: ${unsafe.join('; ')}` });
  try {
    return ajv.compile(schema);
  } catch (err) {
    throw hookdError('CONFIG_PROBLEM', { problem: `not a valid JSON Schema: ${(err as Error).message}` });
  }
}
