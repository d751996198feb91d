import { describe, expect, it } from 'vitest';
import { computedImportsOutside } from '../../../src/transforms/computed-imports.js';

/**
 * The calls esbuild would expand into every file they match (docs/transforms.md#what-a-transform-may-import),
 * found in a transform at /srv/t/sub/x.ts of the folder /srv/t.
 */
const outside = (source: string) =>
  computedImportsOutside(source, '/srv/t/sub/x.ts', '/srv/t').map(({ prefix, line, column }) => [prefix, line, column]);

describe('computed imports that start outside the transforms folder', () => {
  it.each([
    ["require('../../' + n + '.json')", '../../'],
    ['import(`../../${n}.json`)', '../../'],
    ["require(('../../' + n))", '../../'],
    ["require(/* a comment */ '../../' + n)", '../../'],
    ["require('..' + '/../' + n)", '../../'],
    ["require('../' + // here\n '../' + n)", '../../'],
    ["require('/etc/' + n)", '/etc/'],
  ])('finds %s', (call, prefix) => {
    expect(outside(`const a = 1;\nconst f = (n) => ${call};`)).toEqual([[prefix, 2, expect.any(Number)]]);
  });

  it.each([
    "require('./locales/' + n + '.json')",
    "require('../' + n)", // ../ of sub/ is the folder itself
    "require('../../plain.json')", // not computed: the resolver checks it
    'require(n)',
    "require('../../'.concat(n))", // esbuild does not expand it
    'import(`../../plain.js`)',
    "require('..' + n)", // no folder in the pattern: esbuild does not expand it
  ])('leaves %s', (call) => {
    expect(outside(`const f = (n) => ${call};`)).toEqual([]);
  });

  it('places the call', () => {
    expect(outside("\n\n  const f = (n) => require('../../' + n);")).toEqual([['../../', 3, 27]]);
  });
});
