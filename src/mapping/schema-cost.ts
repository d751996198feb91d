import { compileLinear, DATA_KEYWORDS } from './user-schema.js';

/**
 * What a payload schema's patterns can cost (docs/security.md#what-a-schema-check-may-cost). RE2 takes
 * time linear in the input, but also in the pattern's program: a match costs at most program
 * size × characters steps (about 17 ns each here), so four patterns `(?:\w\w?){1000}$` held the
 * thread 12.7 s on one 64 KiB string. One payload's check may take PATTERN_STEP_BUDGET steps:
 * a schema that could take more is refused when it loads, and a check that would go past it
 * at run time (a schema that uses one pattern many times through `$ref`) ends there.
 */

/** The most steps one payload's patterns may take: 2^23, about 0.15 s of the one thread on an idle machine. */
export const PATTERN_STEP_BUDGET = 8 * 1024 * 1024;

/** One pattern of a schema and the most it can cost on one payload. */
export interface PatternCost {
  /** The JSON pointer of its keyword (`/properties/text/pattern`, `/patternProperties`). */
  readonly pointer: string;
  readonly pattern: string;
  readonly instructions: number;
  /**
   * The most characters it can run on, each string counted one longer (a match costs length + 1
   * steps per instruction, and a string takes at least its length + 1 bytes of a body): the
   * body limit, or less when `maxLength` and its arrays' `maxItems` say so.
   */
  readonly chars: number;
}

/** Keywords whose schemas apply to the instance itself, once. */
const SAME_INSTANCE = new Set([
  'allOf',
  'anyOf',
  'oneOf',
  'not',
  'if',
  'then',
  'else',
  'dependentSchemas',
  'dependencies',
]);
/** Keywords whose schemas apply to each item of an array. */
const EACH_ITEM = new Set(['items', 'additionalItems', 'contains', 'unevaluatedItems']);
/** Keywords whose schemas apply to each member (or member name) of an object. */
const EACH_MEMBER = new Set(['additionalProperties', 'unevaluatedProperties', 'propertyNames', 'patternProperties']);

/** `a × b` for counts that may be unbounded (Infinity), where none of 0 is still none. */
const times = (a: number, b: number) => (a === 0 || b === 0 ? 0 : a * b);
const bound = (value: unknown) => (typeof value === 'number' && value >= 0 ? value : Number.POSITIVE_INFINITY);
const pointerKey = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * Every pattern of `schema` with the characters it can run on in one payload of at most
 * `maxChars` characters: `instances` is how many places of the payload the node can apply to
 * (1 at the top; times `maxItems` or `maxProperties` below an array's items or an object's
 * members, unbounded without them). A pattern RE2 cannot run is left to `unsafePatterns`.
 */
export function patternCosts(schema: unknown, maxChars: number, pointer = '', instances = 1): PatternCost[] {
  if (Array.isArray(schema))
    return schema.flatMap((item, i) => patternCosts(item, maxChars, `${pointer}/${i}`, instances));
  if (schema === null || typeof schema !== 'object') return [];
  const node = schema as Record<string, unknown>;
  const found: PatternCost[] = [];
  const add = (at: string, pattern: string, most: number) => {
    const re = compileLinear(pattern);
    if (typeof re === 'string') return;
    found.push({ pointer: at, pattern, instructions: re.programSize(), chars: Math.min(maxChars, most) });
  };
  const members = times(instances, bound(node.maxProperties));
  for (const [key, value] of Object.entries(node)) {
    const at = `${pointer}/${pointerKey(key)}`;
    if (key === 'pattern' && typeof value === 'string') add(at, value, times(instances, bound(node.maxLength) + 1));
    if (DATA_KEYWORDS.has(key) || value === null || typeof value !== 'object') continue;
    if (key === 'patternProperties') {
      const nameLength = bound((node.propertyNames as { maxLength?: unknown } | undefined)?.maxLength);
      for (const name of Object.keys(value)) add(at, name, times(members, nameLength + 1));
    }
    if (key === 'properties' || key === 'patternProperties' || key === 'dependentSchemas') {
      const each = key === 'properties' || key === 'dependentSchemas' ? instances : members;
      for (const [name, sub] of Object.entries(value))
        found.push(...patternCosts(sub, maxChars, `${at}/${pointerKey(name)}`, each));
    } else if (key === 'prefixItems' || (key === 'items' && Array.isArray(value))) {
      found.push(...patternCosts(value, maxChars, at, instances));
    } else if (EACH_ITEM.has(key)) {
      found.push(...patternCosts(value, maxChars, at, times(instances, bound(node.maxItems))));
    } else if (EACH_MEMBER.has(key)) {
      found.push(...patternCosts(value, maxChars, at, members));
    } else {
      // `$defs` and anything else: used where `$ref` says, so as often as the payload allows.
      found.push(...patternCosts(value, maxChars, at, SAME_INSTANCE.has(key) ? instances : Number.POSITIVE_INFINITY));
    }
  }
  return found;
}

/** Why a schema's patterns could take more than PATTERN_STEP_BUDGET steps on one payload; undefined when they cannot. */
export function patternCostProblem(schema: object, maxChars: number): string | undefined {
  const costs = patternCosts(schema, maxChars);
  const steps = (c: PatternCost) => c.instructions * c.chars;
  const total = costs.reduce((sum, c) => sum + steps(c), 0);
  if (total <= PATTERN_STEP_BUDGET) return undefined;
  const worst = [...costs].sort((a, b) => steps(b) - steps(a)).slice(0, 3);
  const shown = worst.map(
    (c) =>
      `${c.pointer} ${JSON.stringify(c.pattern)}: ${c.instructions.toLocaleString('en')} instructions × ${c.chars.toLocaleString('en')} characters`,
  );
  return `its patterns could take ${total.toLocaleString('en')} steps on one payload, above the ${PATTERN_STEP_BUDGET.toLocaleString('en')} a check may take (${shown.join('; ')}); give their strings a maxLength (and their arrays a maxItems), or use simpler patterns`;
}
