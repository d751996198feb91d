import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  linkSync,
  mkdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli.js';
import { makeTempDir, ROOT } from '../../helpers/hookd-process.js';

let temp: ReturnType<typeof makeTempDir>;
beforeEach(() => {
  temp = makeTempDir();
});
afterEach(() => temp.cleanup());

const read = (file: string) => readFileSync(join(temp.dir, file), 'utf8');
const own = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  version: string;
  allowScripts: Record<string, boolean>;
};

describe('hookd init (docs/transforms.md#a-folder-of-your-own)', () => {
  it('writes a folder with a config, a typed example and its fixtures, and a token kept in .env and never printed', async () => {
    const { code, out } = await runCli(['init', 'hooks'], { cwd: temp.dir });
    expect(code).toBe(0);
    const token = /^HOOKD_HOOK_TOKEN=(\S{43})$/m.exec(read('hooks/.env'))?.[1];
    expect(token).toBeDefined();
    expect(statSync(join(temp.dir, 'hooks/.env')).mode & 0o777).toBe(0o600);
    expect(out).not.toContain(token);
    expect(read('hooks/hookd.json5')).toContain("token: '${HOOKD_HOOK_TOKEN}'");
    expect(read('hooks/transforms/example.ts')).toContain("from 'hookd/transform'");
    expect(JSON.parse(read('hooks/transforms/fixtures/example/info.json')).expect).toBeNull();
    expect(read('hooks/.gitignore').split('\n')).toEqual(expect.arrayContaining(['node_modules/', 'data/', '.env']));
    const pkg = JSON.parse(read('hooks/package.json'));
    // hookd is not on the npm registry yet: the folder depends on the hookd that wrote it.
    expect(pkg.dependencies).toEqual({ hookd: `file:${ROOT}` });
    expect(out).toContain(`npm install    # hookd (from ${ROOT}: not on the npm registry yet)`);
    expect(Object.keys(pkg.devDependencies)).toEqual(['typescript']);
    // What hookd's dependencies need to build on install, approved for npm.
    expect(pkg.allowScripts).toEqual(own.allowScripts);
    expect(out).toContain('cd hooks');
    expect(out).toMatch(/curl -sS -X POST http:\/\/127\.0\.0\.1:8787\/hooks\/example/);
  });

  it('refuses to overwrite, naming the files and writing nothing; --force overwrites them and keeps the token', async () => {
    await runCli(['init'], { cwd: temp.dir });
    const env = read('.env');
    writeFileSync(join(temp.dir, 'transforms/example.ts'), '// mine\n');
    const refused = await runCli(['init'], { cwd: temp.dir });
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(/already has hookd\.json5, transforms\/example\.ts, .*nothing was written \(--force/);
    expect(read('transforms/example.ts')).toBe('// mine\n');
    const forced = await runCli(['init', '--force'], { cwd: temp.dir });
    expect(forced.code).toBe(0);
    expect(read('transforms/example.ts')).toContain('defineTransform');
    expect(read('.env')).toBe(env);
  });

  it('adds to a package.json that npm wrote, changing none of its values', async () => {
    writeFileSync(
      join(temp.dir, 'package.json'),
      JSON.stringify({ name: 'mine', type: 'module', dependencies: { hookd: 'file:../hookd-0.1.0.tgz' } }),
    );
    writeFileSync(join(temp.dir, '.env'), 'OTHER=1');
    expect((await runCli(['init'], { cwd: temp.dir })).code).toBe(0);
    const pkg = JSON.parse(read('package.json'));
    expect(pkg).toMatchObject({ name: 'mine', type: 'module', dependencies: { hookd: 'file:../hookd-0.1.0.tgz' } });
    expect(pkg.allowScripts).toEqual(own.allowScripts);
    expect(read('.env')).toMatch(/^OTHER=1\nHOOKD_HOOK_TOKEN=\S{43}\n$/);
  });

  it('leaves a folder whose fixtures pass and whose config checks', async () => {
    await runCli(['init'], { cwd: temp.dir });
    const tested = await runCli(['test'], { cwd: temp.dir });
    expect(tested.out).toContain('ok   example/warning.json');
    expect(tested.out).toContain('hookd: 2 of 2 case(s) passed');
    expect(tested.code).toBe(0);
    expect((await runCli(['check'], { cwd: temp.dir })).code).toBe(0);
  });
});

describe('hookd init writes the token only into a regular .env of yours', () => {
  const refused =
    /\.env (is a symbolic link|is not a regular file|has other hard links); hookd writes the hook token only into a regular file of yours, so nothing was written/;

  it('creates .env 0600 even under umask 0, and tightens an existing one of yours to 0600', async () => {
    const umask = process.umask(0);
    try {
      expect((await runCli(['init', 'fresh'], { cwd: temp.dir })).code).toBe(0);
    } finally {
      process.umask(umask);
    }
    expect(statSync(join(temp.dir, 'fresh/.env')).mode & 0o777).toBe(0o600);
    mkdirSync(join(temp.dir, 'loose'));
    writeFileSync(join(temp.dir, 'loose/.env'), 'OTHER=1\n');
    chmodSync(join(temp.dir, 'loose/.env'), 0o644);
    expect((await runCli(['init', 'loose'], { cwd: temp.dir })).code).toBe(0);
    expect(statSync(join(temp.dir, 'loose/.env')).mode & 0o777).toBe(0o600);
    expect(read('loose/.env')).toMatch(/^OTHER=1\nHOOKD_HOOK_TOKEN=\S{43}\n$/);
  });

  it('reads a package.json that is not JSON before writing anything, and writes nothing', async () => {
    mkdirSync(join(temp.dir, 'hooks'));
    writeFileSync(join(temp.dir, 'hooks/package.json'), '{ // a comment\n "name": "x" }');
    const { code, err } = await runCli(['init', 'hooks'], { cwd: temp.dir });
    expect(code).not.toBe(0);
    expect(err).toContain('hooks/package.json is not JSON');
    expect(existsSync(join(temp.dir, 'hooks/hookd.json5'))).toBe(false);
    expect(existsSync(join(temp.dir, 'hooks/.env'))).toBe(false);
  });

  it('counts a dangling symbolic link where it writes as taken, and never writes through one', async () => {
    mkdirSync(join(temp.dir, 'hooks'));
    symlinkSync(join(temp.dir, 'elsewhere'), join(temp.dir, 'hooks/README.md'));
    const refused = await runCli(['init', 'hooks'], { cwd: temp.dir });
    expect(refused.code).not.toBe(0);
    expect(refused.err).toContain('README.md');
    expect((await runCli(['init', 'hooks', '--force'], { cwd: temp.dir })).code).toBe(0);
    expect(existsSync(join(temp.dir, 'elsewhere'))).toBe(false);
    expect(read('hooks/README.md').length).toBeGreaterThan(0);
  });

  it('never follows a .env symlink, dangling or not, and writes nothing', async () => {
    writeFileSync(join(temp.dir, 'elsewhere.env'), 'MINE=1\n');
    for (const [dir, target] of [
      ['linked', join(temp.dir, 'elsewhere.env')],
      ['dangling', join(temp.dir, 'created-through-the-link.env')],
    ] as const) {
      mkdirSync(join(temp.dir, dir));
      symlinkSync(target, join(temp.dir, dir, '.env'));
      const run = await runCli(['init', dir], { cwd: temp.dir });
      expect(run.code).toBe(1);
      expect(run.err).toMatch(refused);
      expect(existsSync(join(temp.dir, dir, 'hookd.json5'))).toBe(false);
    }
    expect(read('elsewhere.env')).toBe('MINE=1\n');
    expect(existsSync(join(temp.dir, 'created-through-the-link.env'))).toBe(false);
  });

  it('refuses a .env that is a hard link or a FIFO, without waiting on it', async () => {
    writeFileSync(join(temp.dir, 'shared.env'), 'MINE=1\n');
    mkdirSync(join(temp.dir, 'hard'));
    linkSync(join(temp.dir, 'shared.env'), join(temp.dir, 'hard/.env'));
    mkdirSync(join(temp.dir, 'fifo'));
    execFileSync('mkfifo', [join(temp.dir, 'fifo/.env')]);
    for (const dir of ['hard', 'fifo']) {
      const run = await runCli(['init', dir], { cwd: temp.dir });
      expect(run.code, dir).toBe(1);
      expect(run.err).toMatch(refused);
    }
    expect(read('shared.env')).toBe('MINE=1\n');
  });
});
