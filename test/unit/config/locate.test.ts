import { describe, expect, it } from 'vitest';
import { keyPositions, locate, parentPath, stringCharPosition } from '../../../src/config/locate.js';

const TEXT = [
  '// hookd.json5',
  '{',
  '  /* block',
  '     comment */ server: { port: 8080 },',
  "  'hooks': {",
  '    token: "a, b } ]", // a string holding delimiters',
  '    mappings: [',
  "      { id: 'one', match: { path: 'x' } },",
  '      {',
  "        id: 'two',",
  '      },',
  '    ],',
  '  },',
  '  agents: { defaults: { models: { "openai/gpt": {}, } } },',
  '}',
].join('\n');

describe('locating config keys in JSON5 text', () => {
  const positions = keyPositions(TEXT);

  it('places object keys at their first character, quoted or not, past comments and strings', () => {
    expect(positions.get('server')).toEqual({ line: 4, column: 17 });
    expect(positions.get('server.port')).toEqual({ line: 4, column: 27 });
    expect(positions.get('hooks')).toEqual({ line: 5, column: 3 });
    expect(positions.get('hooks.token')).toEqual({ line: 6, column: 5 });
    expect(positions.get('hooks.mappings')).toEqual({ line: 7, column: 5 });
    expect(positions.get('agents.defaults.models["openai/gpt"]')).toEqual({ line: 14, column: 35 });
  });

  it('places array items at their first character', () => {
    expect(positions.get('hooks.mappings[0]')).toEqual({ line: 8, column: 7 });
    expect(positions.get('hooks.mappings[0].match.path')).toEqual({ line: 8, column: 29 });
    expect(positions.get('hooks.mappings[1]')).toEqual({ line: 9, column: 7 });
    expect(positions.get('hooks.mappings[1].id')).toEqual({ line: 10, column: 9 });
  });

  it('falls back to the nearest parent written in the file (a required key that is missing)', () => {
    expect(locate(positions, 'hooks.mappings[1].transform.module')).toEqual({ line: 9, column: 7 });
    expect(locate(positions, 'storage.path')).toBeUndefined();
    expect(parentPath('a.b[0]["c d"]')).toBe('a.b[0]');
    expect(parentPath('a.b[0]')).toBe('a.b');
    expect(parentPath('a')).toBe('');
  });
});

describe("a template's character in its config file", () => {
  const text = ['{', "  a: 'abc {{x} d',", '  b: "\\u00e9\\t{{y}",', "  c: 'one \\", "two {{z}',", '  n: 7,', '}'].join(
    '\n',
  );

  it('counts the characters as written: escapes by their source, a line continuation as none', () => {
    expect(stringCharPosition(text, 'a', 0)).toEqual({ line: 2, column: 7 });
    expect(stringCharPosition(text, 'a', 4)).toEqual({ line: 2, column: 11 });
    // \u00e9 (six characters written) and \t (two) are one character each.
    expect(stringCharPosition(text, 'b', 2)).toEqual({ line: 3, column: 15 });
    // The backslash-newline stands for nothing: the template's 5th character starts line 5.
    expect(stringCharPosition(text, 'c', 4)).toEqual({ line: 5, column: 1 });
    expect(stringCharPosition(text, 'c', 8)).toEqual({ line: 5, column: 5 });
  });

  it('places nothing where the key holds no string', () => {
    expect(stringCharPosition(text, 'n', 0)).toBeUndefined();
    expect(stringCharPosition(text, 'missing', 0)).toBeUndefined();
    expect(stringCharPosition('{ broken', 'a', 0)).toBeUndefined();
  });
});
