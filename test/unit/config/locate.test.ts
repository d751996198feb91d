import { describe, expect, it } from 'vitest';
import { keyPositions, locate, parentPath } from '../../../src/config/locate.js';

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
