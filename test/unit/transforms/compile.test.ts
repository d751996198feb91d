import { cpSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createModelCatalog } from '../../../src/actions/index.js';
import { loadConfig } from '../../../src/config/index.js';
import { isHookdError } from '../../../src/errors.js';
import { compileMappings } from '../../../src/mapping/index.js';
import { createTransformHost } from '../../../src/transforms/index.js';
import { makeTempDir, ROOT } from '../../helpers/hookd-process.js';

let temp: ReturnType<typeof makeTempDir>;
let dir: string;
beforeEach(() => {
  temp = makeTempDir();
  dir = join(temp.dir, 'transforms');
  cpSync(join(ROOT, 'test/fixtures/transforms'), dir, { recursive: true });
});
afterEach(() => temp.cleanup());

const silent = pino({ level: 'silent' });
const hostFor = (mappings: unknown[], extra: { watch?: boolean } = {}) => {
  const config = loadConfig({ data: { hooks: { transformsDir: dir, mappings } }, env: {} });
  return createTransformHost({
    config,
    mappings: compileMappings(config, createModelCatalog(config)),
    log: silent,
    ...extra,
    debounceMs: 20,
  });
};

async function problemsOf(mappings: unknown[]): Promise<readonly string[]> {
  try {
    (await hostFor(mappings)).close();
  } catch (err) {
    if (isHookdError(err, 'CONFIG_INVALID')) return err.params.problems;
    throw err;
  }
  return [];
}

describe('compiling transforms', () => {
  it('reports a syntax error with file:line:col', async () => {
    expect(await problemsOf([{ transform: { module: 'broken.ts' } }])).toEqual([
      `hooks.mappings[0].transform.module: ${join(dir, 'broken.ts')}:2:37: Expected "}" but found ";"`,
    ]);
  });

  it('refuses a static import of a Node built-in at compile time, with file:line:col', async () => {
    const [problem] = await problemsOf([{ transform: { module: 'imports-fs.ts' } }]);
    expect(problem).toMatch(
      new RegExp(
        `${join(dir, 'imports-fs.ts')}:1:30: cannot import "node:fs": transforms may import only relative files`,
      ),
    );
  });

  it('refuses .., absolute and symlinked-out module paths', async () => {
    writeFileSync(join(temp.dir, 'outside.ts'), 'export default () => null;');
    symlinkSync(join(temp.dir, 'outside.ts'), join(dir, 'link.ts'));
    expect(
      await problemsOf([
        { transform: { module: '../outside.ts' } },
        { transform: { module: join(temp.dir, 'outside.ts') } },
        { transform: { module: 'link.ts' } },
        { transform: { module: 'missing.ts' } },
        { transform: { module: 'notes.txt' } },
      ]),
    ).toEqual([
      'hooks.mappings[0].transform.module: expected a path inside hooks.transformsDir, without ..',
      'hooks.mappings[1].transform.module: expected a path relative to hooks.transformsDir, not an absolute path',
      'hooks.mappings[2].transform.module: expected a file inside hooks.transformsDir; it is a symlink that leads out',
      `hooks.mappings[3].transform.module: no such file: ${join(dir, 'missing.ts')}`,
      'hooks.mappings[4].transform.module: expected a .ts, .mts, .js, .mjs file',
    ]);
  });

  it('refuses a relative import that leads out of the folder', async () => {
    writeFileSync(join(temp.dir, 'secret.ts'), 'export const s = 1;');
    writeFileSync(
      join(dir, 'sneaky.ts'),
      "import { s } from '../secret.js';\nexport default () => ({ message: String(s) });\n",
    );
    const [problem] = await problemsOf([{ transform: { module: 'sneaky.ts' } }]);
    expect(problem).toMatch(/sneaky\.ts:1:19: cannot import "\.\.\/secret\.js": it is outside hooks\.transformsDir/);
  });

  it('refuses a module without the named export', async () => {
    const [problem] = await problemsOf([{ transform: { module: 'counter.js', export: 'nope' } }]);
    expect(problem).toMatch(/counter\.js: the module exports no function named nope/);
  });
});

describe('hot reload', () => {
  it('swaps in an edited transform within 2 s and keeps the last good version on a broken edit', async () => {
    const file = join(dir, 'live.ts');
    const version = (n: number) => `export default () => ({ message: 'version ${n}' });\n`;
    writeFileSync(file, version(1));
    const host = await hostFor([{ id: 'live', transform: { module: 'live.ts' } }], { watch: true });
    const call = () =>
      host.run('live', { payload: {}, headers: {}, query: {}, path: 'live', url: '/hooks/live', rawBody: '{}' });
    try {
      await expect(call()).resolves.toEqual({ message: 'version 1' });
      writeFileSync(file, version(2));
      const edited = Date.now();
      await expect.poll(call, { timeout: 2000, interval: 50 }).toEqual({ message: 'version 2' });
      expect(Date.now() - edited).toBeLessThan(2000);
      writeFileSync(file, "export default () => ({ message: 'broken' ;\n");
      await sleep(500);
      await expect(call()).resolves.toEqual({ message: 'version 2' });
      mkdirSync(join(dir, 'lib2'));
      writeFileSync(join(dir, 'lib2/v.ts'), "export const v = 'from an import';\n");
      writeFileSync(file, "import { v } from './lib2/v.js';\nexport default () => ({ message: v });\n");
      await expect.poll(call, { timeout: 2000, interval: 50 }).toEqual({ message: 'from an import' });
    } finally {
      host.close();
    }
  });
});
