import { describe, expect, it } from 'vitest';
import { payloadChecker } from '../../../src/mapping/payload-schema.js';
import { patternCostProblem, patternCosts } from '../../../src/mapping/schema-cost.js';
import {
  compileSchema,
  createSchemaAjv,
  PatternBudgetSpent,
  type PatternMeter,
} from '../../../src/mapping/user-schema.js';

/**
 * What a payload schema's patterns may cost (docs/security.md#what-a-schema-check-may-cost): program size
 * × characters, bounded when the schema loads and counted while it runs.
 */

const BODY = 256 * 1024;
/** The patterns that held the thread 12.7 s on one 64 KiB string: about 3,000 instructions each. */
const HEAVY = [1000, 999, 998, 997].map((n) => `(?:\\w\\w?){${n}}$`);
const heavyText = {
  type: 'object',
  properties: { text: { type: 'string', allOf: HEAVY.map((pattern) => ({ pattern })) } },
};

describe('the cost of a schema, counted when it loads', () => {
  it('refuses the four patterns of 3,000 instructions on a 64 KiB body, naming the costliest', () => {
    const problem = patternCostProblem(heavyText, 64 * 1024);
    expect(problem).toMatch(/^its patterns could take 78\d,\d{3},\d{3} steps on one payload, above the 8,388,608/);
    expect(problem).toContain(
      '/properties/text/allOf/0/pattern "(?:\\\\w\\\\w?){1000}$": 3,003 instructions × 65,536 characters',
    );
    expect(problem).toMatch(/give their strings a maxLength/);
    expect(() => payloadChecker(heavyText, 64 * 1024)).toThrow(/its patterns could take/);
  });

  it('takes a short pattern on the default body, and a heavy one bounded by maxLength', () => {
    const short = { type: 'object', properties: { id: { type: 'string', pattern: '^[a-z0-9-]+$' } } };
    expect(patternCostProblem(short, BODY)).toBeUndefined();
    const bounded = { type: 'string', maxLength: 1000, pattern: HEAVY[0] };
    expect(patternCosts(bounded, BODY)).toEqual([
      { pointer: '/pattern', pattern: HEAVY[0], instructions: 3003, chars: 1001 },
    ]);
    expect(patternCostProblem(bounded, BODY)).toBeUndefined();
  });

  it('counts a pattern under items once per item: maxLength alone does not bound it, maxItems does', () => {
    const each = { type: 'array', items: { type: 'string', maxLength: 10, pattern: '^a+$' } };
    expect(patternCosts(each, BODY)[0]?.chars).toBe(BODY);
    expect(patternCosts({ ...each, maxItems: 20 }, BODY)[0]?.chars).toBe(220);
    // Names of members, and a schema in $defs (used wherever $ref says): as long as the body.
    const names = { type: 'object', patternProperties: { '^x-': {} }, $defs: { t: { maxLength: 5, pattern: 'b' } } };
    expect(patternCosts(names, BODY).map((c) => [c.pointer, c.chars])).toEqual([
      ['/patternProperties', BODY],
      ['/$defs/t/pattern', BODY],
    ]);
  });
});

describe('the cost of a check, counted while it runs', () => {
  it('never spends more than its budget: the match that would go past it does not run', () => {
    const meter: PatternMeter = { stepsLeft: 0 };
    const validate = compileSchema(createSchemaAjv({}, meter), { type: 'string', pattern: HEAVY[0] });
    meter.stepsLeft = 3003 * 1001;
    expect(validate('a'.repeat(1000))).toBe(true);
    expect(meter.stepsLeft).toBe(0);
    meter.stepsLeft = 3003 * 1001 - 1;
    expect(() => validate('a'.repeat(1000))).toThrow(PatternBudgetSpent);
    expect(meter.stepsLeft).toBe(3003 * 1001 - 1);
  });

  it('stops a schema that reaches one pattern many times through $ref, and answers what stopped it', () => {
    // Counted once when it loads (about 1.6 M steps), run 40 times on the one string.
    const schema = {
      $defs: { word: { type: 'string', maxLength: 50_000, pattern: '(?:\\w\\w?){10}$' } },
      type: 'object',
      properties: { text: { allOf: Array.from({ length: 40 }, () => ({ $ref: '#/$defs/word' })) } },
    };
    const check = payloadChecker(schema, 1024);
    expect(check({ text: 'a'.repeat(100) })).toBeUndefined();
    // 40 × 33 × 50,001 steps asked, about 8 times the budget: the meter (above) lets none past it run.
    const refused = check({ text: 'a'.repeat(50_000) });
    expect(refused).toEqual({
      pointer: '',
      problem: expect.stringMatching(/would take more than 8,388,608 steps \("\(\?:\\\\w\\\\w\?\)\{10\}\$" on/),
    });
  });
});

describe('the comparisons of enum and const, counted when a schema loads', () => {
  const numbers = (n: number) => Array.from({ length: n }, (_, i) => n - i);

  it('refuses a long enum over every item of an array, and takes it where it applies once or a bounded number of times', () => {
    // Before: an enum of 100,000 numbers over a 240 KB array of items held the thread 14.6 s.
    const over = { type: 'array', items: { enum: numbers(100_000) } };
    expect(patternCostProblem(over, 240 * 1024)).toMatch(
      /^its enum and const values could take [\d,]+ steps of comparisons on one payload, above the 8,388,608 a check may take \(the most at \/items\/enum\)/,
    );
    expect(
      patternCostProblem({ type: 'object', properties: { kind: { enum: numbers(100_000) } } }, BODY),
    ).toBeUndefined();
    expect(patternCostProblem({ ...over, maxItems: 10 }, BODY)).toBeUndefined();
    expect(patternCostProblem({ type: 'array', items: { enum: numbers(500) } }, BODY)).toBeUndefined();
    const big = { type: 'array', items: { const: numbers(20_000) } };
    expect(patternCostProblem(big, BODY)).toMatch(/the most at \/items\/const/);
  });

  it('compiles a schema with an $id again (a reload), on the same checker', () => {
    // Before: the second compile was refused: the $id was taken by the first.
    const schema = { $id: 'https://example.com/push', type: 'object', required: ['ref'] };
    expect(payloadChecker(structuredClone(schema), BODY)({ ref: 'main' })).toBeUndefined();
    expect(payloadChecker(structuredClone(schema), BODY)({})).toMatchObject({
      problem: expect.stringContaining('ref'),
    });
  });
});
