import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createPresetFixtures } from '../../../src/admin/preset-fixtures.js';
import type { CompiledMapping } from '../../../src/mapping/index.js';
import { makeTempDir } from '../../helpers/hookd-process.js';

/** A preset's fixtures as the playground gets them (docs/runtime.md#admin-api). */

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const fn of cleanups.splice(0)) fn();
});

function presetWith(files: Record<string, string>) {
  const temp = makeTempDir();
  cleanups.push(temp.cleanup);
  const paths = Object.entries(files).map(([name, text]) => {
    writeFileSync(join(temp.dir, name), text);
    return join(temp.dir, name);
  });
  // As the preset loader lists them: the mapping's preset and its fixture files.
  const mapping = { id: 'plugin:acme:0', preset: { name: 'acme', fixtures: paths } } as unknown as CompiledMapping;
  return createPresetFixtures([mapping]);
}

describe("a preset's fixtures", () => {
  it('lists those the playground can post, by name, and leaves out a file that is not a fixture or too large', () => {
    const fixtures = presetWith({
      'a.json': JSON.stringify({ description: 'first', headers: { 'X-A': '1', n: 2 }, body: 'raw=text', expect: null }),
      'b.json': JSON.stringify({ body: { n: 1 }, expect: null }),
      'broken.json': '{ not json',
      'no-body.json': JSON.stringify({ headers: {} }),
      'huge.json': JSON.stringify({ body: 'x'.repeat(1024 * 1024) }),
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
