import { createRequire } from 'node:module';
import type { Ajv, Options, ValidateFunction } from 'ajv';
import type { RE2JS } from 're2js';
import { hookdError } from '../errors.js';
import { linearUniqueItems } from './unique-items.js';

/**
 * ajv and re2js load with the first supplied schema or pattern, not at start: a config without
 * one never pays for them (docs/operations.md#start-up-and-memory).
 */
const requireOnUse = createRequire(import.meta.url);
let ajvClass: typeof Ajv | undefined;
let re2: typeof RE2JS | undefined;
const ajvOf = () => (ajvClass ??= (requireOnUse('ajv') as typeof import('ajv')).Ajv);
const re2Of = () => (re2 ??= (requireOnUse('re2js') as typeof import('re2js')).RE2JS);

type RegExpEngine = NonNullable<NonNullable<Options['code']>['regExp']>;

/**
 * What a check's patterns may still spend, in steps (a pattern's program size × the characters
 * it runs on: RE2's time is linear in both). A match that would take more throws
 * PatternBudgetSpent before it starts, which ends the check (docs/security.md#regular-expressions).
 */
export interface PatternMeter {
  stepsLeft: number;
}

/** Thrown by a pattern whose match would take more steps than its check has left. */
export class PatternBudgetSpent extends Error {
  constructor(readonly pattern: string) {
    super(`the pattern ${JSON.stringify(pattern)} would take more steps than the check has left`);
  }
}

/**
 * JSON Schemas that a config or a plugin supplies (a mapping's payload `schema`, a preset's
 * `options`), compiled with every `pattern` and `patternProperties` key on RE2, a linear-time
 * engine (docs/security.md#regular-expressions): `^(a+)+$` cannot hold the event loop, and a
 * pattern RE2 cannot run (a backreference, a lookaround) is refused when the schema compiles.
 * With a meter, every match is paid for before it runs.
 */
function linearRegExp(meter?: PatternMeter): RegExpEngine {
  return Object.assign(
    (pattern: string) => {
      const re = compileLinear(pattern);
      if (typeof re === 'string')
        throw hookdError('CONFIG_PROBLEM', { problem: `pattern ${JSON.stringify(pattern)}: ${re}` });
      const instructions = re.programSize();
      const test = (s: string) => {
        if (meter) {
          const steps = instructions * (s.length + 1);
          if (steps > meter.stepsLeft) throw new PatternBudgetSpent(pattern);
          meter.stepsLeft -= steps;
        }
        return re.matcher(s).find();
      };
      // ajv keys compiled patterns by their text: two patterns must not share one.
      return { test, toString: () => `re2:${pattern}` };
    },
    { code: 're2js' },
  );
}

/** The pattern compiled for RE2, or why it cannot be. */
export function compileLinear(pattern: string): RE2JS | string {
  const RE2 = re2Of();
  try {
    return RE2.compile(RE2.translateRegExp(pattern));
  } catch (err) {
    const reason = (err as Error).message.replace(/^error parsing regexp: /, '');
    return `${reason} (hookd runs patterns on a linear-time engine: no backreferences, no lookahead or lookbehind)`;
  }
}

/** Keywords whose values are data, not schemas: a `pattern` key inside them is not a pattern. */
export const DATA_KEYWORDS = new Set(['enum', 'const', 'default', 'examples', 'description', 'title']);

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

/**
 * An ajv instance for supplied schemas: these options, RE2 for every pattern (paid for from
 * `meter` when given), and `uniqueItems` in linear time.
 */
export function createSchemaAjv(options: Options = {}, meter?: PatternMeter): Ajv {
  // A schema's `$id` is not kept: its second compile (a reload) was refused as a duplicate, and a
  // plugin's schema could claim another's `$id` for its `$ref`s.
  const ajv = new (ajvOf())({
    strict: false,
    addUsedSchema: false,
    ...options,
    code: { ...options.code, regExp: linearRegExp(meter) },
  });
  ajv.removeKeyword('uniqueItems');
  ajv.addKeyword(linearUniqueItems);
  return ajv;
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
    const validate = ajv.compile(schema);
    // Its cache keeps every schema compiled, each reload's too (28 MB for 200 of 200 properties).
    ajv.removeSchema(schema);
    return validate;
  } catch (err) {
    throw hookdError('CONFIG_PROBLEM', { problem: `not a valid JSON Schema: ${(err as Error).message}` });
  }
}
