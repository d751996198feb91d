import { describe, expect, it } from 'vitest';
import { createModelCatalog } from '../../../src/actions/index.js';
import { loadConfig } from '../../../src/config/index.js';
import { collectMappings } from '../../../src/mapping/index.js';

/**
 * A mapping field no request could make valid is a problem of the config, found by `check` and
 * `serve` (docs/mappings.md#a-mapping). Before, `check` said OK and every request to the mapping was
 * a 400 `INVALID_FIELD` its sender could not mend.
 */
function problemsOf(mapping: object, hooks: object = {}): readonly string[] {
  const config = loadConfig({
    data: {
      hooks: {
        enabled: true,
        token: 't'.repeat(24),
        mappings: [{ match: { path: 'gh' }, messageTemplate: 'x', ...mapping }],
        ...hooks,
      },
    },
    env: {},
  });
  return collectMappings(config, createModelCatalog(config)).problems;
}

describe("a mapping's fixed fields", () => {
  it.each([
    [
      { thinking: 'ultra' },
      /^hooks\.mappings\[0\]\.thinking: expected one of off, minimal, low, medium, high, xhigh, got "ultra"$/,
    ],
    [{ sessionKey: 'other:x' }, /^hooks\.mappings\[0\]\.sessionKey: expected a key starting with hook:/],
    [{ sessionKey: 'other:{{id}}' }, /^hooks\.mappings\[0\]\.sessionKey: expected a key starting with hook:/],
    [{ sessionKey: '' }, /sessionKey: expected a key starting with hook:/],
  ])('refuses %j', (mapping, problem) => {
    expect(problemsOf(mapping)).toEqual([expect.stringMatching(problem)]);
  });

  it('refuses a timeoutSeconds past a day, as a request is refused', () => {
    expect(() => problemsOf({ timeoutSeconds: 1e10 })).toThrow(/hooks\.mappings\[0\]\.timeoutSeconds/);
  });

  it.each([
    { thinking: 'high' },
    { thinking: '{{level}}' },
    { sessionKey: 'hook:gh:{{id}}' },
    { sessionKey: 'HOOK:gh' },
    { sessionKey: 'ho{{rest}}' },
    { sessionKey: '{{key}}' },
    { timeoutSeconds: 86_400 },
  ])('takes %j, checked per request where it is a template', (mapping) => {
    expect(problemsOf(mapping)).toEqual([]);
  });

  it('reads the allowed prefixes from hooks.allowedSessionKeyPrefixes', () => {
    expect(problemsOf({ sessionKey: 'main' }, { allowedSessionKeyPrefixes: ['ma'] })).toEqual([
      expect.stringMatching(/sessionKey: expected a key starting with ma/),
    ]);
    expect(problemsOf({ sessionKey: 'mail:x' }, { allowedSessionKeyPrefixes: ['ma'] })).toEqual([]);
  });
});
