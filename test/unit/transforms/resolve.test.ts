import { mkdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resolveTransformModule } from '../../../src/transforms/resolve.js';
import { makeTempDir } from '../../helpers/hookd-process.js';

let temp: ReturnType<typeof makeTempDir>;
let dir: string;
beforeEach(() => {
  temp = makeTempDir();
  dir = join(temp.dir, 'transforms');
  mkdirSync(dir);
});
afterEach(() => temp.cleanup());

describe('resolving transform.module', () => {
  it('refuses .., absolute and symlinked-out module paths', () => {
    writeFileSync(join(temp.dir, 'outside.ts'), 'export default () => null;');
    symlinkSync(join(temp.dir, 'outside.ts'), join(dir, 'link.ts'));
    writeFileSync(join(dir, 'inside.ts'), 'export default () => null;');
    const problems = ['../outside.ts', join(temp.dir, 'outside.ts'), 'link.ts', 'missing.ts', 'notes.txt'].map(
      (module) => resolveTransformModule(dir, module),
    );
    expect(problems).toEqual([
      { problem: 'expected a path inside hooks.transformsDir, without ..' },
      { problem: 'expected a path relative to hooks.transformsDir, not an absolute path' },
      { problem: 'expected a file inside hooks.transformsDir; it is a symlink that leads out' },
      { problem: `no such file: ${join(dir, 'missing.ts')} (hooks.transformsDir holds "inside.ts", "link.ts")` },
      { problem: 'expected a .ts, .mts, .js, .mjs file' },
    ]);
    expect(resolveTransformModule(dir, 'inside.ts')).toEqual({ file: realpathSync(join(dir, 'inside.ts')) });
  });

  it('suggests the nearest module names in the folder and its subfolders for a missing one', () => {
    mkdirSync(join(dir, 'lib'));
    mkdirSync(join(dir, 'node_modules'));
    for (const file of ['meterly.ts', 'meter.ts', 'github.ts', 'lib/meterly.ts', 'node_modules/meterly.ts', 'notes.md'])
      writeFileSync(join(dir, file), '');
    const problem = (module: string) => (resolveTransformModule(dir, module) as { problem: string }).problem;
    expect(problem('meterli.ts')).toBe(
      `no such file: ${join(dir, 'meterli.ts')} (did you mean "meterly.ts" or "meter.ts"?)`,
    );
    expect(problem('meterly.js')).toMatch(/\(did you mean "meterly\.ts"/);
    expect(problem('lib/meterli.ts')).toMatch(/\(did you mean "lib\/meterly\.ts"\?\)$/);
    expect(problem('stripe-events.ts')).toMatch(
      /\(hooks\.transformsDir holds "github\.ts", "lib\/meterly\.ts", "meter\.ts", "meterly\.ts"\)$/,
    );
    expect((resolveTransformModule(join(temp.dir, 'nowhere'), 'a.ts') as { problem: string }).problem).toMatch(
      /\(hooks\.transformsDir does not exist: /,
    );
  });
});
