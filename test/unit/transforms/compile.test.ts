import { cpSync, mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/index.js';
import { isHookdError } from '../../../src/errors.js';
import { compileTransform, createTransformHost } from '../../../src/transforms/index.js';
import { loadTransforms } from '../../../src/transforms/load.js';
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

describe('a path computed at run time (esbuild expands it into every file it matches)', () => {
  // esbuild bundles `require('../' + name + '.json')` as every file the pattern matches, and
  // reads them without asking the resolver: a transform bundled the operator's config this way.
  beforeEach(() => writeFileSync(join(temp.dir, 'hookd.json'), '{"hooks":{"token":"HOOK-TOKEN-SECRET"}}'));

  it.each([
    ['a concatenation', "const read = (n: string) => require('../' + n + '.json');"],
    ['a template literal', 'const read = (n: string) => import(`../${n}.json`);'],
  ])('is refused at compile time: %s', async (_, line) => {
    writeFileSync(
      join(dir, 'glob.ts'),
      `${line}\nexport default (p: any) => ({ message: JSON.stringify(read(p.f)) });\n`,
    );
    const compiling = compileTransform(join(dir, 'glob.ts'), dir);
    const err = await compiling.catch((e: unknown) => e);
    expect(isHookdError(err, 'TRANSFORM_COMPILE_FAILED') && err.params.problems.join('\n')).toMatch(
      /glob\.ts:1:\d+: cannot import a path computed at run time/,
    );
    expect(JSON.stringify(err)).not.toMatch(/HOOK-TOKEN-SECRET/);
  });

  it("bundles the folder's own files for a computed path that starts inside it", async () => {
    mkdirSync(join(dir, 'locales'));
    writeFileSync(join(dir, 'locales/en.json'), '{"hello":"Hello"}');
    writeFileSync(
      join(dir, 'glob.ts'),
      "const words = (lang: string) => require('./locales/' + lang + '.json');\nexport default (p: any) => ({ message: words(p.lang).hello });\n",
    );
    const compiled = await compileTransform(join(dir, 'glob.ts'), dir);
    expect(compiled.code).toMatch(/hello: "Hello"/);
    expect(compiled.code).not.toMatch(/HOOK-TOKEN-SECRET/);
  });

  it('never loads a file outside the folder, however the path reached esbuild', async () => {
    // The source scan is one guard; the loader's own check is the other: written so the scan
    // does not see it (a comment between the call and its argument).
    writeFileSync(
      join(dir, 'glob.ts'),
      "const read = (n: string) => require(/* */ '../' + n + '.json');\nexport default (p: any) => ({ message: JSON.stringify(read(p.f)) });\n",
    );
    const err = await compileTransform(join(dir, 'glob.ts'), dir).catch((e: unknown) => e);
    const problems = isHookdError(err, 'TRANSFORM_COMPILE_FAILED') ? err.params.problems.join('\n') : 'compiled';
    expect(problems).toMatch(/hookd\.json is outside hooks\.transformsDir|cannot import a path computed at run time/);
    expect(JSON.stringify(err)).not.toMatch(/HOOK-TOKEN-SECRET/);
  });
});

describe('a sourceMappingURL comment in a transform', () => {
  // esbuild reads the file such a comment names itself: a FIFO hung the build, /dev/zero grew
  // it without bound, and a map outside the folder brought its sources in.
  it.each(['/dev/zero', '../outside.map'])(
    'is not followed: %s',
    async (target) => {
      writeFileSync(
        join(temp.dir, 'outside.map'),
        JSON.stringify({ version: 3, sources: ['x'], sourcesContent: ['SECRET-SOURCE'], mappings: 'AAAA' }),
      );
      writeFileSync(
        join(dir, 'mapped.js'),
        `export default () => ({ message: 'hi' });\n//# sourceMappingURL=${target}\n`,
      );
      const compiled = await compileTransform(join(dir, 'mapped.js'), dir);
      expect(compiled.mapText).not.toMatch(/SECRET-SOURCE/);
      expect(compiled.code).toMatch(/message: "hi"/);
    },
    20_000,
  );
});

describe("a restarted transform process's last good bundles", () => {
  // The bundles cross to the transform process as JSON: a plain object, whose inherited keys
  // (`constructor`, `toString`) are not bundles of mappings of those names.
  it.each(['constructor', 'toString'])('are not looked up in the prototype for a mapping called %s', async (id) => {
    const config = loadConfig({ data: { hooks: { transformsDir: dir } }, env: {} });
    const kept: string[] = [];
    const loading = loadTransforms({
      config,
      mappings: [{ id, configPath: 'hooks.mappings[0]', transform: { module: 'broken.ts' } }],
      consoleFor: () => ({ enabled: [], write: () => undefined, dropped: () => undefined }),
      known: JSON.parse('{}'),
      onKept: (key) => kept.push(key),
    });
    const err = await loading.catch((e: unknown) => e);
    expect(isHookdError(err, 'CONFIG_INVALID') && err.params.problems).toEqual([
      `hooks.mappings[0].transform.module: ${join(dir, 'broken.ts')}:2:37: Expected "}" but found ";"`,
    ]);
    expect(kept).toEqual([]);
  });
});

describe('hookd/transform in a transform (docs/transforms.md#writing-one)', () => {
  it('bundles defineTransform alone, never hookd itself, and watches no file for it', async () => {
    writeFileSync(
      join(dir, 'typed.ts'),
      [
        "import { defineTransform, type FromSchema } from 'hookd/transform';",
        "const schema = { type: 'object', properties: { n: { type: 'number' } } } as const;",
        'export default defineTransform<FromSchema<typeof schema>>(({ payload }) => ({ message: `n=${payload.n}` }));',
      ].join('\n'),
    );
    const compiled = await compileTransform(join(dir, 'typed.ts'), dir);
    expect(compiled.code).toContain('function defineTransform(fn)');
    // Nothing of hookd's own modules: no error catalogue, no action shape, no esbuild.
    expect(compiled.code).not.toMatch(/hookdError|ACTION_FIELDS|esbuild/);
    expect(compiled.code.length).toBeLessThan(2000);
    expect(compiled.inputs).toEqual([realpathSync(join(dir, 'typed.ts'))]);
  });

  it('runs a transform written with defineTransform in the sandbox', async () => {
    writeFileSync(
      join(dir, 'helper.ts'),
      "import { defineTransform } from 'hookd/transform';\nexport default defineTransform<{ n: number }>(({ payload }) => ({ message: `n=${payload.n}` }));\n",
    );
    const config = loadConfig({
      data: { hooks: { transformsDir: dir, mappings: [{ id: 'h', transform: { module: 'helper.ts' } }] } },
      env: {},
    });
    const host = await createTransformHost({ ...hostConfig(config), log: pino({ level: 'silent' }) });
    try {
      const input = { payload: { n: 7 }, headers: {}, query: {}, path: 'h', url: '/hooks/h', rawBody: '{"n":7}' };
      expect(await host.run('h', input)).toEqual({ message: 'n=7' });
    } finally {
      host.close();
    }
  });

  it('still refuses any other package', async () => {
    writeFileSync(join(dir, 'pkg.ts'), "import { x } from 'hookd/internal';\nexport default () => ({ message: x });\n");
    const [problem] = await problemsOf([{ transform: { module: 'pkg.ts' } }]);
    expect(problem).toMatch(/pkg\.ts:1:19: cannot import "hookd\/internal": transforms may import only relative files/);
  });
});
