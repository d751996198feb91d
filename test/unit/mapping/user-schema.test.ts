import { describe, expect, it } from 'vitest';
import { compileSchema, createSchemaAjv, unsafePatterns } from '../../../src/mapping/user-schema.js';

/** Patterns a config or a plugin supplies run on RE2 (docs/security.md#regular-expressions). */

const ajv = createSchemaAjv({ allErrors: true });
const stringWith = (pattern: string) => ({ type: 'string', pattern });

describe('supplied JSON Schemas', () => {
  it('checks ^(a+)+$ against 40 a and a ! without backtracking (a backtracking engine takes hours)', () => {
    const validate = compileSchema(ajv, stringWith('^(a+)+$'));
    expect(validate(`${'a'.repeat(40)}!`)).toBe(false);
    expect(validate('a'.repeat(40))).toBe(true);
    expect(validate(`${'a'.repeat(200_000)}!`)).toBe(false);
  });

  it('keeps the JavaScript pattern syntax RE2 can run: classes, escapes, named groups, Unicode properties', () => {
    const cases: [string, string, boolean][] = [
      ['^\\d{3}-\\w+$', '123-abc', true],
      ['^\\d{3}-\\w+$', '12-abc', false],
      ['\\u00e9t\\u00e9', 'été', true],
      ['^(?<year>\\d{4})$', '2026', true],
      ['^\\p{L}+$', 'Ünïcødé', true],
      ['^\\p{L}+$', 'abc1', false],
      ['a/b', 'xa/by', true],
    ];
    for (const [pattern, input, expected] of cases) {
      expect(compileSchema(ajv, stringWith(pattern))(input), `${pattern} on ${input}`).toBe(expected);
    }
  });

  it('keeps each pattern apart (two patterns of one schema are two checks)', () => {
    const validate = compileSchema(ajv, {
      type: 'object',
      properties: { a: stringWith('^a$'), b: stringWith('^b$') },
      patternProperties: { '^x-': { type: 'number' } },
    });
    expect(validate({ a: 'a', b: 'b', 'x-n': 1 })).toBe(true);
    expect(validate({ a: 'b' })).toBe(false);
    expect(validate({ 'x-n': 'one' })).toBe(false);
  });

  it('refuses a backreference, a lookahead and a lookbehind, each at its JSON pointer', () => {
    const schema = {
      type: 'object',
      properties: { twice: stringWith('^(a)\\1$'), ahead: stringWith('^(?=x)') },
      patternProperties: { '(?<=a)b': {} },
      propertyNames: { pattern: '^(?!no)' },
      // Data, not patterns: never checked.
      default: { pattern: '(a)\\1' },
    };
    const found = unsafePatterns(schema);
    expect(found).toEqual([
      expect.stringMatching(/^\/properties\/twice\/pattern: "\^\(a\)\\\\1\$": invalid escape sequence/),
      expect.stringMatching(/^\/properties\/ahead\/pattern: "\^\(\?=x\)": invalid or unsupported Perl syntax/),
      expect.stringMatching(/^\/patternProperties: "\(\?<=a\)b": /),
      expect.stringMatching(/^\/propertyNames\/pattern: "\^\(\?!no\)": /),
    ]);
    expect(() => compileSchema(ajv, schema)).toThrow(
      /a pattern that cannot be run safely: \/properties\/twice\/pattern/,
    );
  });

  it('says what is wrong with a schema that is not one', () => {
    expect(() => compileSchema(ajv, { type: 'nonsense' })).toThrow(/^not a valid JSON Schema: /);
  });
});
