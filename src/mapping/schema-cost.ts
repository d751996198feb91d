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
 * Calls `visit` with every schema node of `schema`, its JSON pointer and how many places of one
 * payload it can apply to: 1 at the top; times `maxItems` or `maxProperties` below an array's
 * items or an object's members, unbounded without them.
 */
function visitPlaces(
  schema: unknown,
  visit: (node: Record<string, unknown>, pointer: string, instances: number) => void,
  pointer = '',
  instances = 1,
): void {
  if (Array.isArray(schema)) {
    for (const [i, item] of schema.entries()) visitPlaces(item, visit, `${pointer}/${i}`, instances);
    return;
  }
  if (schema === null || typeof schema !== 'object') return;
  const node = schema as Record<string, unknown>;
  visit(node, pointer, instances);
  const members = times(instances, bound(node.maxProperties));
  for (const [key, value] of Object.entries(node)) {
    const at = `${pointer}/${pointerKey(key)}`;
    if (DATA_KEYWORDS.has(key) || value === null || typeof value !== 'object') continue;
    if (key === 'properties' || key === 'patternProperties' || key === 'dependentSchemas') {
      const each = key === 'properties' || key === 'dependentSchemas' ? instances : members;
      for (const [name, sub] of Object.entries(value)) visitPlaces(sub, visit, `${at}/${pointerKey(name)}`, each);
    } else if (key === 'prefixItems' || (key === 'items' && Array.isArray(value))) {
      visitPlaces(value, visit, at, instances);
    } else if (EACH_ITEM.has(key)) {
      visitPlaces(value, visit, at, times(instances, bound(node.maxItems)));
    } else if (EACH_MEMBER.has(key)) {
      visitPlaces(value, visit, at, members);
    } else {
      // `$defs` and anything else: used where `$ref` says, so as often as the payload allows.
      visitPlaces(value, visit, at, SAME_INSTANCE.has(key) ? instances : Number.POSITIVE_INFINITY);
    }
  }
}

/**
 * Every pattern of `schema` with the characters it can run on in one payload of at most
 * `maxChars` characters (see visitPlaces for `instances`). A pattern RE2 cannot run is left to
 * `unsafePatterns`.
 */
export function patternCosts(schema: unknown, maxChars: number): PatternCost[] {
  const found: PatternCost[] = [];
  visitPlaces(schema, (node, pointer, instances) => {
    const add = (at: string, pattern: string, most: number) => {
      const re = compileLinear(pattern);
      if (typeof re === 'string') return;
      found.push({ pointer: at, pattern, instructions: re.programSize(), chars: Math.min(maxChars, most) });
    };
    if (typeof node.pattern === 'string')
      add(`${pointer}/pattern`, node.pattern, times(instances, bound(node.maxLength) + 1));
    const names = node.patternProperties;
    if (names !== null && typeof names === 'object' && !Array.isArray(names)) {
      const members = times(instances, bound(node.maxProperties));
      const nameLength = bound((node.propertyNames as { maxLength?: unknown } | undefined)?.maxLength);
      for (const name of Object.keys(names)) add(`${pointer}/patternProperties`, name, times(members, nameLength + 1));
    }
  });
  return found;
}

/**
 * Comparisons an `enum` or a `const` costs where it applies: one per value listed (per
 * character of a `const`), for each place of the payload (a value takes at least 2 characters
 * of a body). About 16 of them take the time of one pattern step: an `enum` of 100,000 numbers
 * over a 240 KB array held the thread 14.6 s.
 */
export function comparisonCosts(schema: unknown, maxChars: number): { pointer: string; steps: number }[] {
  const found: { pointer: string; steps: number }[] = [];
  visitPlaces(schema, (node, pointer, instances) => {
    const places = Math.min(instances, Math.ceil(maxChars / 2));
    if (Array.isArray(node.enum))
      found.push({ pointer: `${pointer}/enum`, steps: Math.ceil((node.enum.length * places) / COMPARISONS_PER_STEP) });
    if ('const' in node) {
      const size = JSON.stringify(node.const ?? null).length;
      found.push({ pointer: `${pointer}/const`, steps: Math.ceil((size * places) / COMPARISONS_PER_STEP) });
    }
  });
  return found;
}

/** Comparisons of an `enum` that take the time of one pattern step. */
const COMPARISONS_PER_STEP = 16;

/** Why a schema's patterns could take more than PATTERN_STEP_BUDGET steps on one payload; undefined when they cannot. */
export function patternCostProblem(schema: object, maxChars: number): string | undefined {
  const costs = patternCosts(schema, maxChars);
  const steps = (c: PatternCost) => c.instructions * c.chars;
  const total = costs.reduce((sum, c) => sum + steps(c), 0);
  const listed = comparisonCosts(schema, maxChars);
  const compared = listed.reduce((sum, c) => sum + c.steps, 0);
  if (compared > PATTERN_STEP_BUDGET) {
    const worst = [...listed].sort((a, b) => b.steps - a.steps)[0];
    return `its enum and const values could take ${compared.toLocaleString('en')} steps of comparisons on one payload, above the ${PATTERN_STEP_BUDGET.toLocaleString('en')} a check may take (the most at ${worst?.pointer}); list fewer values, or give their arrays a maxItems`;
  }
  if (total <= PATTERN_STEP_BUDGET) return undefined;
  const worst = [...costs].sort((a, b) => steps(b) - steps(a)).slice(0, 3);
  const shown = worst.map(
    (c) =>
      `${c.pointer} ${JSON.stringify(c.pattern)}: ${c.instructions.toLocaleString('en')} instructions × ${c.chars.toLocaleString('en')} characters`,
  );
  return `its patterns could take ${total.toLocaleString('en')} steps on one payload, above the ${PATTERN_STEP_BUDGET.toLocaleString('en')} a check may take (${shown.join('; ')}); give their strings a maxLength (and their arrays a maxItems), or use simpler patterns`;
}
