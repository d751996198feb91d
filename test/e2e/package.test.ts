import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTempDir } from '../helpers/hookd-process.js';
import { assertLogLines } from '../helpers/log-lines.js';
import { localPrebuilds, npmEnv, type Packed, packHookd } from '../helpers/package.js';

/**
 * hookd as a user installs it (docs/transforms.md#a-folder-of-your-own): `npm pack`,
 * the tarball installed globally (README's Install section) and into the folder `hookd init`
 * writes, in temp folders that never see this checkout. npm installs the tarball's
 * dependencies from its cache (filled by this checkout's `npm ci`; the registry for anything
 * missing), with --strict-allow-scripts: an install script that the documented approvals do
 * not cover fails the install, as npm's coming default will. The native modules' install
 * scripts run as approved; prebuild-install finds their binaries among local prebuilds made
 * from this checkout's built modules (test/helpers/package.ts) instead of compiling for minutes.
 */
const exec = promisify(execFile);
const temp = makeTempDir('hookd-package-');
const APPROVED = 'better-sqlite3,esbuild,isolated-vm';
let packed: Packed;
const env = npmEnv();
/** For the installs: prebuild-install's local prebuilds. */
let installEnv: NodeJS.ProcessEnv;
const global = join(temp.dir, 'global');
const app = join(temp.dir, 'app');
let initOut = '';
const children: ChildProcess[] = [];

beforeAll(async () => {
  packed = await packHookd(temp.dir);
  installEnv = npmEnv(await localPrebuilds(join(temp.dir, 'prebuilds')));
}, 120_000);
afterAll(() => {
  for (const child of children) if (child.exitCode === null) process.kill(-(child.pid as number), 'SIGKILL');
  temp.cleanup();
});

/** Runs a command in `cwd`; resolves to its exit code and output (never throws on a non-zero exit). */
async function run(cwd: string, command: string, args: string[], withEnv = env) {
  const result = await exec(command, args, { cwd, env: withEnv, maxBuffer: 16 * 1024 * 1024, timeout: 240_000 }).catch(
    (err: { code: number; stdout: string; stderr: string }) => err,
  );
  return { code: 'code' in result ? result.code : 0, out: `${result.stdout}${result.stderr}` };
}

/** `npx` of what the folder has installed: `--no` never fetches a package of that name. */
const npx = (...args: string[]) => run(app, 'npx', ['--no', '--', ...args]);

/** The commands `hookd init` printed under `Next:`, their comments cut: what a user types. */
const steps = () =>
  (initOut.split('Next:\n')[1] ?? '')
    .split('\n')
    .filter((line) => line.startsWith('  '))
    .map((line) => line.trim().replace(/\s+#.*$/, ''));

describe('the package, installed', () => {
  it('ships only what runs: bin/, dist/, presets/ and console/', () => {
    const tops = new Set(packed.files.map((f) => f.split('/')[0]));
    expect([...tops].sort()).toEqual(['README.md', 'bin', 'console', 'dist', 'package.json', 'presets']);
    expect(packed.files).toContain('dist/cli/main.js');
    expect(packed.files).toContain('dist/transform.js');
    expect(packed.files).toContain('dist/types/transforms/authoring.d.ts');
    expect(packed.files.filter((f) => f.endsWith('.test.ts'))).toEqual([]);
  });

  it('installs globally from the tarball with the approvals README gives, and `hookd init` writes a folder', async () => {
    // npm's strict preflight reads the prefix's lib/ before it makes it (a real prefix has one).
    mkdirSync(join(global, 'lib'), { recursive: true });
    const installed = await run(
      temp.dir,
      'npm',
      [
        'install',
        '--global',
        '--prefix',
        global,
        `--allow-scripts=${APPROVED}`,
        '--strict-allow-scripts',
        '--prefer-offline',
        packed.tarball,
      ],
      installEnv,
    );
    expect(installed.out).not.toMatch(/node-gyp rebuild/);
    expect(installed.code, installed.out).toBe(0);
    // Every dependency runs on the Node hookd supports: npm warns of none that asks for a newer one.
    expect(installed.out).not.toMatch(/EBADENGINE/);
    const init = await run(temp.dir, join(global, 'bin/hookd'), ['init', 'app']);
    expect(init.code, init.out).toBe(0);
    initOut = init.out;
    expect(existsSync(join(app, 'transforms/example.ts'))).toBe(true);
  }, 300_000);

  it('installs the folder with the `npm install` init printed: hookd linked from where it runs, not fetched', async () => {
    expect(steps()).toEqual(['cd app', 'npm install', 'npm test', 'npm start', expect.stringMatching(/^curl /)]);
    // As printed, run by a shell from where init ran; npm as strict as its coming default.
    const strict = { ...installEnv, npm_config_strict_allow_scripts: 'true', npm_config_prefer_offline: 'true' };
    const installed = await run(temp.dir, 'sh', ['-c', `${steps()[0]} && ${steps()[1]}`], strict);
    expect(installed.code, installed.out).toBe(0);
    // The installed package has no sources: it runs its built JavaScript, from the global install.
    expect(realpathSync(join(app, 'node_modules/hookd'))).toBe(realpathSync(join(global, 'lib/node_modules/hookd')));
    expect(existsSync(join(app, 'node_modules/hookd/src'))).toBe(false);
    expect(existsSync(join(app, 'node_modules/hookd/dist/cli/main.js'))).toBe(true);
  }, 300_000);

  it('type-checks the example and a FromSchema-typed transform with tsc, and fails a deliberate type error', async () => {
    writeFileSync(
      join(app, 'transforms/typed.ts'),
      [
        "import type { FromSchema, TransformResult } from 'hookd/transform';",
        "import { defineTransform } from 'hookd/transform';",
        "const schema = { type: 'object', required: ['n'], properties: { n: { type: 'integer' } } } as const;",
        'export default defineTransform<FromSchema<typeof schema>>(({ payload }): TransformResult => ({',
        "  kind: 'wake', text: `n is ${payload.n.toFixed(0)}`,",
        '}));',
      ].join('\n'),
    );
    const clean = await npx('tsc', '--noEmit');
    expect(clean.out).toBe('');
    expect(clean.code).toBe(0);
    writeFileSync(
      join(app, 'transforms/wrong.ts'),
      "import { defineTransform } from 'hookd/transform';\nexport default defineTransform<{ n: number }>(({ payload }) => ({ kind: 'wake', text: payload.n }));\n",
    );
    const wrong = await npx('tsc', '--noEmit');
    expect(wrong.out).toMatch(
      /transforms\/wrong\.ts\(2,\d+\): error TS2322: Type 'number' is not assignable to type 'string'/,
    );
    expect(wrong.code).not.toBe(0);
  }, 120_000);

  it('runs the fixtures green with the `npm test` init printed, and red once a fixture is broken', async () => {
    const green = await run(app, 'sh', ['-c', steps()[2] as string]);
    expect(green.out).toContain('hookd: 2 of 2 case(s) passed');
    expect(green.code).toBe(0);
    const file = join(app, 'transforms/fixtures/example/warning.json');
    const fixture = JSON.parse(readFileSync(file, 'utf8'));
    fixture.expect[0].message = 'not what the transform says';
    writeFileSync(file, JSON.stringify(fixture));
    const red = await run(app, 'sh', ['-c', steps()[2] as string]);
    expect(red.out).toContain('FAIL example/warning.json');
    expect(red.code).toBe(1);
  }, 120_000);

  it('serves the folder with the `npm start` init printed, which answers the curls init and serve print', async () => {
    // Port 0: another test may hold 8787; the printed curl is sent to the port it got.
    const config = join(app, 'hookd.json5');
    writeFileSync(config, readFileSync(config, 'utf8').replace('port: 8787', 'port: 0'));
    const child = spawn('sh', ['-c', steps()[3] as string], { cwd: app, env, detached: true });
    children.push(child);
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    await expect.poll(() => out, { timeout: 30_000, interval: 100 }).toMatch(/"msg":"hookd listening"/);
    const url = /"url":"(http:\/\/[^"]+)"/.exec(out)?.[1] as string;
    const curl = steps()[4] as string;
    expect(curl).toContain('http://127.0.0.1:8787/hooks/example');
    const answer = await run(app, 'sh', ['-c', curl.replace('http://127.0.0.1:8787', url)]);
    expect(JSON.parse(answer.out)).toMatchObject({ ok: true, sessionKey: 'hook:example:ci' });
    // serve's own curl, pasted from another folder: the token read from the folder's .env.
    await expect.poll(() => out, { timeout: 10_000 }).toMatch(/^ {2}curl .*$/m);
    const served = await run(temp.dir, 'sh', ['-c', /^ {2}(curl .*)$/m.exec(out)?.[1] as string]);
    expect(JSON.parse(served.out)).toMatchObject({ ok: true, sessionKey: 'hook:example:ci' });
    process.kill(-(child.pid as number), 'SIGTERM');
    await new Promise((done) => child.once('exit', done));
    assertLogLines(out, 'the installed hookd serve');
  }, 60_000);
});
