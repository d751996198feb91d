import { cpSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/index.js';
import { isHookdError } from '../../../src/errors.js';
import { createTransformHost } from '../../../src/transforms/index.js';
import { makeTempDir, ROOT } from '../../helpers/hookd-process.js';
import { hostConfig } from '../../helpers/transforms.js';

let temp: ReturnType<typeof makeTempDir>;
let dir: string;
beforeEach(() => {
  temp = makeTempDir();
  dir = join(temp.dir, 'transforms');
  cpSync(join(ROOT, 'test/fixtures/transforms'), dir, { recursive: true });
});
afterEach(() => temp.cleanup());

async function problemsOf(mappings: unknown[]): Promise<readonly string[]> {
  try {
    const config = loadConfig({ data: { hooks: { transformsDir: dir, mappings } }, env: {} });
    (await createTransformHost({ ...hostConfig(config), log: pino({ level: 'silent' }) })).close();
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

  it('refuses a relative import that leads out of the folder', async () => {
    writeFileSync(join(temp.dir, 'secret.ts'), 'export const s = 1;');
    writeFileSync(
      join(dir, 'sneaky.ts'),
      "import { s } from '../secret.js';\nexport default () => ({ message: String(s) });\n",
    );
    const [problem] = await problemsOf([{ transform: { module: 'sneaky.ts' } }]);
    expect(problem).toMatch(/sneaky\.ts:1:19: cannot import "\.\.\/secret\.js": it is outside hooks\.transformsDir/);
  });
});
