import { resolve } from 'node:path';
import type { Ajv, ErrorObject } from 'ajv';
import JSON5 from 'json5';
import { hookdError } from '../errors.js';
import { readRegularFile } from '../read-file.js';
import { PATTERN_STEP_BUDGET, patternCostProblem } from './schema-cost.js';
import { compileSchema, createSchemaAjv, PatternBudgetSpent, type PatternMeter } from './user-schema.js';

/** A payload's problem against a mapping's schema: the JSON pointer of the value, and what is wrong with it. */
export interface SchemaProblem {
  readonly pointer: string;
  readonly problem: string;
}

/**
 * A mapping's payload `schema` (docs/mappings.md#a-mapping): read, compiled, its cost
 * bounded (docs/security.md#what-a-schema-check-may-cost), and run before any template or transform.
 */

/** What the payload checks' patterns have left; set before each check (they run one at a time, synchronously). */
const meter: PatternMeter = { stepsLeft: PATTERN_STEP_BUDGET };
/** The most a schema file of yours may hold (a plugin's: MAX_PRESET_FILE_BYTES). */
const MAX_SCHEMA_FILE_BYTES = 16 * 1024 * 1024;
/** Made for the first mapping with a schema, not at start (a config without one never makes it). */
let ajv: Ajv | undefined;
/** The same with every error kept, for `hookd test` and `hookd try` (never on a live request's way). */
let allErrorsAjv: Ajv | undefined;

/**
 * A mapping's `schema`: an object, or a file relative to the config's folder — JSON, or a
 * TypeScript module that is only `export default { … } as const` (read as JSON5 data, never
 * run), so that a transform types its payload from the same schema with `FromSchema`.
 */
export function readSchema(schema: string | object, baseDir: string): object {
  if (typeof schema !== 'string') return structuredClone(schema);
  const read = readRegularFile(resolve(baseDir, schema), MAX_SCHEMA_FILE_BYTES);
  if ('problem' in read) throw hookdError('CONFIG_PROBLEM', { problem: `${schema} ${read.problem}` });
  return schemaOfText(read.text, schema);
}

/** The JSON Schema a schema file's text holds (`name` says which kind: `.ts` or JSON); throws CONFIG_PROBLEM. */
export function schemaOfText(text: string, name: string): object {
  const isModule = /\.[cm]?ts$/.test(name);
  const data = isModule ? exportedData(text) : text;
  if (data === undefined)
    throw hookdError('CONFIG_PROBLEM', { problem: 'a .ts schema holds only `export default { … } as const`' });
  let parsed: unknown;
  try {
    parsed = isModule ? JSON5.parse(data) : JSON.parse(data);
  } catch {
    // Never the parser's message: it quotes the file's text (a schema that is not one can be any file).
    throw hookdError('CONFIG_PROBLEM', {
      problem: `${name} is not ${isModule ? 'a JSON5 object after export default' : 'JSON'}`,
    });
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw hookdError('CONFIG_PROBLEM', { problem: `${name} does not hold a JSON Schema object` });
  return parsed;
}

/**
 * What `export default … as const;` exports, as text. Cut by hand, not by one regular
 * expression: the lazy group and the white space around it made one cubic in the spaces of a
 * file (4,000 held the thread 30 s), and a plugin's schema.ts is anybody's text.
 */
function exportedData(text: string): string | undefined {
  const code = stripComments(text).trim();
  const head = /^export\s+default\s/.exec(code);
  if (!head) return undefined;
  let data = code.slice(head[0].length).trim();
  if (data.endsWith(';')) data = data.slice(0, -1).trimEnd();
  const asConst = /\sas\s+const$/.exec(data);
  return asConst ? data.slice(0, asConst.index).trimEnd() : data;
}

/** A TypeScript module's text without its comments (strings kept as they are). */
function stripComments(text: string): string {
  return text.replace(
    /("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')|\/\/[^\n]*|\/\*[\s\S]*?\*\//g,
    (_, quoted: string | undefined) => quoted ?? '',
  );
}

/**
 * Compiles a payload schema into the check `route` runs first; throws CONFIG_PROBLEM when it
 * does not compile, or when its patterns could take more than PATTERN_STEP_BUDGET steps on a
 * body of `maxBodyBytes` (a string has at most as many characters as the body has bytes).
 */
export function payloadChecker(source: object, maxBodyBytes: number): (payload: unknown) => SchemaProblem | undefined {
  ajv ??= createSchemaAjv({ allErrors: false }, meter);
  const validate = compileSchema(ajv, source);
  const tooCostly = patternCostProblem(source, maxBodyBytes);
  if (tooCostly) throw hookdError('CONFIG_PROBLEM', { problem: tooCostly });
  return (payload) => {
    meter.stepsLeft = PATTERN_STEP_BUDGET;
    try {
      if (validate(payload)) return undefined;
    } catch (err) {
      if (!(err instanceof PatternBudgetSpent)) throw err;
      return budgetSpent(err);
    }
    return problemOf(validate.errors?.[0]);
  };
}

/** A pattern budget spent, as the payload's problem. */
const budgetSpent = (err: PatternBudgetSpent): SchemaProblem => ({
  pointer: '',
  problem: `checking it against the schema's patterns would take more than ${PATTERN_STEP_BUDGET.toLocaleString('en')} steps (${JSON.stringify(err.pattern)} on a long string or many); the check stops there`,
});

/** An ajv error as a problem (`additionalProperties` names the extra key). */
function problemOf(error: ErrorObject | undefined): SchemaProblem {
  const extra = error?.keyword === 'additionalProperties' ? ` (${String(error.params.additionalProperty)})` : '';
  return { pointer: error?.instancePath ?? '', problem: `${error?.message ?? 'does not match'}${extra}` };
}

/**
 * Every problem of a payload against the schema (`hookd test`'s report), within the same
 * pattern budget; compiled on first use, never on a live request's way.
 */
export function everyProblem(source: object): (payload: unknown) => readonly SchemaProblem[] {
  let validate: ReturnType<typeof compileSchema> | undefined;
  return (payload) => {
    allErrorsAjv ??= createSchemaAjv({ allErrors: true }, meter);
    validate ??= compileSchema(allErrorsAjv, source);
    meter.stepsLeft = PATTERN_STEP_BUDGET;
    try {
      return validate(payload) ? [] : (validate.errors ?? []).map(problemOf);
    } catch (err) {
      if (!(err instanceof PatternBudgetSpent)) throw err;
      return [budgetSpent(err)];
    }
  };
}
