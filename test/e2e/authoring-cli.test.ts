import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeTempDir, ROOT, runHookd, startHookd, writeConfig } from '../helpers/hookd-process.js';

/**
 * Authoring from the shell (docs/cli.md, docs/transforms.md#testing-with-fixtures): `hookd test`
 * showing why a case failed, `hookd try` and `hookd send` fed a fixture file, and a template's
 * syntax error placed at its line and column by every command that reads the config.
 */

const TOKEN = 'authoring-hook-token-0123456789';
const GATEWAY = 'authoring-gateway-token-0123456789';
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

// Throws on line 3 for a build number over 1.
const BUILDS = `type Build = { n: number; branch: string };
export default ({ payload }: { payload: Build }) => {
  if (payload.n > 1) throw new Error('too many builds on ' + payload.branch);
  return { kind: 'wake', text: 'build ' + payload.n };
};
`;
const SCHEMA = {
  type: 'object',
  required: ['n', 'branch'],
  properties: { n: { type: 'integer' }, branch: { type: 'string' } },
};

/** A folder with two mappings and their fixtures; returns the folder and the config file. */
function folder(): { dir: string; file: string } {
  const temp = makeTempDir();
  cleanups.push(temp.cleanup);
  const dir = temp.dir;
  mkdirSync(join(dir, 'transforms/fixtures/builds'), { recursive: true });
  writeFileSync(join(dir, 'transforms/builds.ts'), BUILDS);
  const fixture = (name: string, payload: unknown, expect: unknown) =>
    writeFileSync(join(dir, 'transforms/fixtures/builds', name), JSON.stringify({ payload, expect }, null, 2));
  fixture('one.json', { n: 1, branch: 'main' }, [{ kind: 'wake', text: 'build 1' }]);
  fixture('two.json', { n: 2, branch: 'main' }, [{ kind: 'wake', text: 'build 2' }]);
  fixture('wrong.json', { n: 'three', extra: true }, null);
  const file = writeConfig(dir, {
    gateway: { auth: { token: GATEWAY } },
    hooks: {
      enabled: true,
      token: TOKEN,
      mappings: [{ id: 'builds', match: { path: 'builds' }, schema: SCHEMA, transform: { module: 'builds.ts' } }],
      presets: [{ name: 'github', secret: 'authoring-github-secret' }],
    },
    agents: { defaults: { model: 'builtin/echo', heartbeat: { every: '0' } } },
  });
  return { dir, file };
}

describe('hookd test', () => {
  it("prints a failing case's frames and code frame, every schema problem, and the same as JSON", async () => {
    const { dir, file } = folder();
    const human = await runHookd(['test', '--config', file], { cwd: dir });
    expect(human.code).toBe(1);
    const out = human.stdout;
    expect(out).toContain('ok   builds/one.json\n');
    expect(out).toContain('FAIL builds/two.json\n    answered 500 TRANSFORM_FAILED: transform failed: builds.ts:3:');
    expect(out).toContain('too many builds on main');
    expect(out).toMatch(/\n {8}at \S+ \(builds\.ts:3:\d+\)\n/);
    expect(out).toMatch(/\n {4}> 3 \| {3}if \(payload\.n > 1\) throw new Error/);
    expect(out).toContain('FAIL builds/wrong.json\n    answered 400 PAYLOAD_INVALID:');
    expect(out).toContain('every problem the schema finds (2):');
    for (const problem of ['/n: must be integer', "(the payload): must have required property 'branch'"])
      expect(out).toContain(`      ${problem}`);
    expect(out).toContain('hookd: 1 of 3 case(s) passed');

    const json = await runHookd(['test', '--json', '--config', file], { cwd: dir });
    expect(json.code).toBe(1);
    const report = JSON.parse(json.stdout) as { ok: boolean; passed: number; failed: number; cases: unknown[] };
    expect(report).toMatchObject({ ok: false, passed: 1, failed: 2 });
    expect(report.cases).toEqual([
      { mapping: 'builds', case: 'one.json', file: 'transforms/fixtures/builds/one.json', ok: true },
      {
        mapping: 'builds',
        case: 'two.json',
        file: 'transforms/fixtures/builds/two.json',
        ok: false,
        error: expect.objectContaining({
          status: 500,
          code: 'TRANSFORM_FAILED',
          location: { file: 'builds.ts', line: 3, column: expect.any(Number) },
          frames: [expect.stringMatching(/^at \S+ \(builds\.ts:3:\d+\)$/)],
          codeFrame: expect.stringContaining('> 3 |'),
        }),
      },
      {
        mapping: 'builds',
        case: 'wrong.json',
        file: 'transforms/fixtures/builds/wrong.json',
        ok: false,
        error: expect.objectContaining({
          status: 400,
          code: 'PAYLOAD_INVALID',
          problems: [
            { pointer: '', problem: "must have required property 'branch'" },
            { pointer: '/n', problem: 'must be integer' },
          ],
        }),
      },
    ]);
  });
});

describe('hookd try and hookd send --fixture', () => {
  it('take a folder fixture or a preset fixture, and refuse both or neither of --payload and --fixture', async () => {
    const { dir, file } = folder();
    const folderFixture = join(dir, 'transforms/fixtures/builds/one.json');
    const tried = await runHookd(['try', 'builds', '--fixture', folderFixture, '--config', file], { cwd: dir });
    expect(tried.stderr).toBe('');
    expect(JSON.parse(tried.stdout)).toMatchObject({ mapping: 'builds', actions: [{ kind: 'wake', text: 'build 1' }] });

    // A preset's recorded delivery: its headers (the event type among them) and its body.
    const push = join(ROOT, 'presets/github/fixtures/push.json');
    const preset = await runHookd(['try', 'github', '--fixture', push, '--config', file], { cwd: dir });
    expect(preset.code).toBe(0);
    expect(JSON.parse(preset.stdout)).toMatchObject({ mapping: 'preset:github', eventType: 'push' });

    const both = await runHookd(
      ['try', 'builds', '--fixture', folderFixture, '--payload', folderFixture, '--config', file],
      {
        cwd: dir,
      },
    );
    expect(both.code).toBe(1);
    expect(both.stderr).toContain('--fixture expects either --fixture or --payload');
    const neither = await runHookd(['try', 'builds', '--config', file], { cwd: dir });
    expect(neither.code).toBe(1);
    expect(neither.stderr).toContain('--payload expects a body: --payload FILE or --fixture FILE');
    writeFileSync(join(dir, 'odd.json'), JSON.stringify({ headers: {}, nothing: 1 }));
    const odd = await runHookd(['try', 'builds', '--fixture', 'odd.json', '--config', file], { cwd: dir });
    expect(odd.code).toBe(1);
    expect(odd.stderr).toContain('--fixture expects a fixture: { "headers"?: {…}, "payload": … }');

    const gateway = await startHookd({ dir, args: ['--config', file] });
    cleanups.push(() => gateway.stop());
    const sent = await runHookd(
      ['send', 'builds', '--fixture', folderFixture, '--config', file, '--url', gateway.url],
      {
        cwd: dir,
      },
    );
    expect(sent.code).toBe(0);
    expect(sent.stdout).toMatch(/^POST .*\/hooks\/builds → 200 \{"ok":true,"mode":"now","eventId":/);
    const signed = await runHookd(
      ['send', 'github', '--fixture', push, '--config', file, '--url', gateway.url, '--wait', '0'],
      {
        cwd: dir,
      },
    );
    expect(signed.stdout).toMatch(/→ 202 /);
  });
});

describe('a template error', () => {
  it('names the mapping, the key and the line and column of the faulty tag, for serve, try and check alike', async () => {
    const temp = makeTempDir();
    cleanups.push(temp.cleanup);
    const text = [
      '{',
      `  hooks: { enabled: true, token: '${TOKEN}',`,
      '    mappings: [',
      "      { id: 'ci', match: { path: 'ci' },",
      "        messageTemplate: 'build {{n} failed' },",
      '    ],',
      '  },',
      `  storage: { path: '${join(temp.dir, 'data/hookd.db')}' },`,
      '}',
    ].join('\n');
    writeFileSync(join(temp.dir, 'hookd.json5'), text);
    writeFileSync(join(temp.dir, 'p.json'), '{"n":1}');
    // Line 5; the template's quote at column 26, its faulty end at column 44 (the 18th character).
    const located =
      'hookd.json5:5:44: error: hooks.mappings[0].messageTemplate: template error (mapping ci): Unclosed tag at 17';
    for (const args of [['serve'], ['try', 'ci', '--payload', 'p.json'], ['check'], ['test']]) {
      const result = await runHookd(args, { cwd: temp.dir });
      expect(result.code, args[0]).toBe(1);
      expect(result.stderr.split('\n'), args[0]).toContain(located);
    }
  });

  it('names the nearest variable set, in the environment or the .env beside the config, for an unset one', async () => {
    const temp = makeTempDir();
    cleanups.push(temp.cleanup);
    writeFileSync(
      join(temp.dir, 'hookd.json5'),
      `{ hooks: { enabled: true, token: '\${PAYLARK_SECRT}' }, gateway: { auth: { token: '\${GATEWAY_TOKN}' } } }\n`,
    );
    writeFileSync(join(temp.dir, '.env'), 'PAYLARK_SECRET=paylark-secret-0123456789\n');
    const result = await runHookd(['check'], { cwd: temp.dir, env: { GATEWAY_TOKEN: 'gateway-token-0123456789' } });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      'hookd.json5:1:75: error: gateway.auth.token: environment variable GATEWAY_TOKN is not set (did you mean GATEWAY_TOKEN?)',
    );
    expect(result.stderr).toContain(
      'hookd.json5:1:27: error: hooks.token: environment variable PAYLARK_SECRT is not set (did you mean PAYLARK_SECRET?)',
    );
    const served = await runHookd(['serve'], { cwd: temp.dir });
    expect(served.code).toBe(1);
    expect(served.stderr).toContain('PAYLARK_SECRT is not set (did you mean PAYLARK_SECRET?)');
  });
});
