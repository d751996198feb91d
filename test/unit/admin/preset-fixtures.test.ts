import { describe, expect, it } from 'vitest';
import { createPresetFixtures } from '../../../src/admin/preset-fixtures.js';
import type { CompiledMapping } from '../../../src/mapping/index.js';

/** A preset's fixtures as the playground gets them (docs/runtime.md#admin-api). */

function presetWith(files: Record<string, string>) {
  // As the preset loader read them from its folder: the mapping's preset and its fixtures' texts.
  const fixtures = Object.entries(files).map(([name, text]) => ({ name: `fixtures/${name}`, text }));
  const mapping = { id: 'plugin:acme:0', preset: { name: 'acme', fixtures } } as unknown as CompiledMapping;
  return createPresetFixtures([mapping]);
}

describe("a preset's fixtures", () => {
  it('lists those the playground can post, by name, and leaves out a file that is not a fixture', () => {
    const fixtures = presetWith({
      'a.json': JSON.stringify({ description: 'first', headers: { 'X-A': '1', n: 2 }, body: 'raw=text', expect: null }),
      'b.json': JSON.stringify({ body: { n: 1 }, expect: null }),
      'broken.json': '{ not json',
      'no-body.json': JSON.stringify({ headers: {} }),
    });
    expect(fixtures.list('acme')).toEqual([
      { name: 'a', description: 'first', kind: 'preset' },
      { name: 'b', kind: 'preset' },
    ]);
    // Only string headers: a fixture is data from someone else.
    expect(fixtures.get('acme', 'a')).toEqual({ headers: { 'X-A': '1' }, body: 'raw=text' });
    expect(fixtures.get('acme', 'b')).toEqual({ headers: {}, body: { n: 1 } });
    expect(fixtures.list('other')).toBeUndefined();
  });

  it('finds one by name only: 400 for a path, 404 for an unknown preset or fixture', () => {
    const fixtures = presetWith({ 'a.json': JSON.stringify({ body: {} }) });
    for (const [preset, name] of [
      ['acme', '../a'],
      ['acme', 'x/a'],
      ['acme', '..'],
      ['acme', 'a\\b'],
      ['../acme', 'a'],
    ] as const)
      expect(() => fixtures.get(preset, name)).toThrow(
        expect.objectContaining({ code: 'INVALID_FIELD', statusCode: 400 }),
      );
    expect(() => fixtures.get('github', 'push')).toThrow(
      expect.objectContaining({ code: 'NOT_FOUND', statusCode: 404 }),
    );
    expect(() => fixtures.get('acme', 'broken')).toThrow(/no fixture broken \(acme has: a\)/);
  });
});
