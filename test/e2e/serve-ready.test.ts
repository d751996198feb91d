import { execFile } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { type HookdProcess, makeTempDir, startHookd } from '../helpers/hookd-process.js';
import { call } from '../helpers/http.js';

/**
 * `hookd serve` on a config file (docs/cli.md#hookd-serve): once ready it says where it is, where
 * the console and its gateway token are, and prints a curl that works as pasted, reading the
 * hook token where the config takes it from; and it reloads the file's mappings when it changes
 * (docs/configuration.md#reloading-the-configuration).
 */

const sh = promisify(execFile);
const HOOK_TOKEN = 'serve-ready-hook-token-0123456789';
const GATEWAY_TOKEN = 'serve-ready-gateway-token-0123456789';
const HOOK = { authorization: `Bearer ${HOOK_TOKEN}` };
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

/** A folder with a config (its text from `hooks`), a `.env` and a fixture case for mapping ci. */
function folder(configText: string, dotenv: string) {
  const temp = makeTempDir();
  cleanups.push(temp.cleanup);
  writeFileSync(join(temp.dir, 'hookd.json5'), configText);
  writeFileSync(join(temp.dir, '.env'), dotenv);
  mkdirSync(join(temp.dir, 'transforms/fixtures/ci'), { recursive: true });
  const payload = { n: 7 };
  writeFileSync(join(temp.dir, 'transforms/fixtures/ci/build.json'), JSON.stringify({ payload, expect: null }));
  return temp.dir;
}

const configText = (hookToken: string, gatewayToken: string, mappings: string) =>
  `{ server: { port: 0 }, gateway: { auth: { token: '${gatewayToken}' } },
  hooks: { enabled: true, token: '${hookToken}', mappings: [${mappings}] },
  agents: { defaults: { heartbeat: { every: '0' } } }, storage: { path: 'data/hookd.db' } }\n`;
const CI = `{ id: 'ci', match: { path: 'ci' }, action: 'wake', textTemplate: 'build {{n}}' }`;

/** The lines serve printed for people, on stderr (stdout holds its JSON log alone). */
const said = (p: HookdProcess) =>
  p
    .stderr()
    .split('\n')
    .filter((line) => line.startsWith('hookd: ') || line.startsWith('  curl '));

async function serve(dir: string, env: NodeJS.ProcessEnv = {}) {
  const hookd = await startHookd({ dir, env });
  cleanups.push(() => hookd.stop());
  await expect.poll(() => hookd.stderr(), { timeout: 10_000 }).toMatch(/is watched/);
  // Every line of stdout is a JSON log line.
  for (const line of hookd.stdout().split('\n').filter(Boolean)) expect(() => JSON.parse(line)).not.toThrow();
  return hookd;
}

describe('hookd serve, once ready', () => {
  it('prints its address, the console and where the gateway token is, and a curl that works as pasted', async () => {
    // The value in quotes, as many .env files have it (the curl printed read them along before).
    const dir = folder(configText('${CI_HOOK_TOKEN}', '${CI_GATEWAY_TOKEN}', CI), `CI_HOOK_TOKEN="${HOOK_TOKEN}"\n`);
    const hookd = await serve(dir, { CI_GATEWAY_TOKEN: GATEWAY_TOKEN });
    const lines = said(hookd);
    expect(lines[0]).toBe(`hookd: listening on ${hookd.url} (hooks under /hooks/)`);
    expect(lines[1]).toBe(
      `hookd: the console is at ${hookd.url}/ui/ (sign in with the gateway token in $CI_GATEWAY_TOKEN, set in the environment hookd was started with)`,
    );
    expect(lines[2]).toBe(`hookd: try it (the hook token read from ${join(dir, '.env')}):`);
    const curl = (lines[3] as string).trim();
    expect(curl).toContain(`${hookd.url}/hooks/ci `);
    expect(lines[4]).toBe(
      `hookd: ${join(dir, 'hookd.json5')} is watched: its mappings, presets and plugins reload when it changes`,
    );
    expect(hookd.stdout() + hookd.stderr()).not.toContain(HOOK_TOKEN);
    expect(hookd.stdout()).not.toContain(GATEWAY_TOKEN);
    // Pasted in another shell, elsewhere, without the variables: the fixture's build goes in.
    const { stdout } = await sh('sh', ['-c', curl], { cwd: makeTempDir().dir, env: { PATH: process.env.PATH } });
    expect(JSON.parse(stdout)).toMatchObject({ ok: true, mode: 'now' });
  });

  it('names the config key of a token written in the file, and a variable the shell must have', async () => {
    const dir = folder(configText('${CI_HOOK_TOKEN}', GATEWAY_TOKEN, CI), '');
    const hookd = await serve(dir, { CI_HOOK_TOKEN: HOOK_TOKEN });
    const lines = said(hookd);
    expect(lines[1]).toMatch(/\(sign in with the gateway token in hookd\.json5 \(gateway\.auth\.token\)\)$/);
    expect(lines[2]).toBe('hookd: try it (the hook token read from $CI_HOOK_TOKEN: set it in this shell too):');
    const curl = (lines[3] as string).trim();
    expect(curl).toContain('-H "Authorization: Bearer $CI_HOOK_TOKEN"');
    const { stdout } = await sh('sh', ['-c', curl], { env: { PATH: process.env.PATH, CI_HOOK_TOKEN: HOOK_TOKEN } });
    expect(JSON.parse(stdout)).toMatchObject({ ok: true });
  });
});

describe('hookd.json5 reloads on change', () => {
  it('applies new and changed mappings, keeps the running ones when the file is wrong, and says what needs a restart', async () => {
    const dir = folder(configText(HOOK_TOKEN, GATEWAY_TOKEN, CI), '');
    const hookd = await serve(dir);
    const file = join(dir, 'hookd.json5');
    const wake = async (path: string, n: number) => {
      const answer = await call(`${hookd.url}/hooks/${path}`, { headers: HOOK, json: { n } });
      return answer.status === 200 ? (answer.body.eventId as string) : `${answer.status} ${answer.body.code}`;
    };
    const eventText = async (id: string) => {
      const events = await call(`${hookd.url}/api/main/events`, {
        method: 'GET',
        headers: { authorization: `Bearer ${GATEWAY_TOKEN}` },
      });
      return (events.body.events as { id: string; text: string }[]).find((e) => e.id === id)?.text;
    };
    const logged = (msg: string) =>
      hookd
        .stdout()
        .split('\n')
        .filter((line) => line.includes(`"msg":"${msg}"`));
    expect(await wake('deploy', 1)).toBe('404 NO_MAPPING');

    // A new mapping, and a transform with it: compiled before it takes a request.
    mkdirSync(join(dir, 'transforms'), { recursive: true });
    writeFileSync(
      join(dir, 'transforms/deploy.ts'),
      `export default ({ payload }: { payload: { n: number } }) => ({ kind: 'wake', text: 'deploy ' + payload.n });\n`,
    );
    const deploy = `{ id: 'deploy', match: { path: 'deploy' }, action: 'wake', transform: { module: 'deploy.ts' } }`;
    writeFileSync(file, configText(HOOK_TOKEN, GATEWAY_TOKEN, `${CI}, ${deploy}`));
    await expect.poll(() => logged('configuration reloaded').length, { timeout: 15_000 }).toBe(1);
    expect(JSON.parse(logged('configuration reloaded')[0] as string)).toMatchObject({
      changed: ['hooks.mappings'],
      mappings: 2,
    });
    expect(await eventText(await wake('deploy', 2))).toBe('deploy 2');

    // A template that does not compile: refused, located, and the mappings in force stay.
    writeFileSync(file, configText(HOOK_TOKEN, GATEWAY_TOKEN, CI.replace('build {{n}}', 'build {{n}')));
    await expect
      .poll(() => logged('configuration reload failed; the running one is kept').length, { timeout: 15_000 })
      .toBe(1);
    const refused = JSON.parse(logged('configuration reload failed; the running one is kept')[0] as string);
    expect(refused.problems).toEqual([
      expect.stringContaining('hooks.mappings[0].textTemplate: template error (mapping ci)'),
    ]);
    expect(await eventText(await wake('ci', 3))).toBe('build 3');
    expect(await eventText(await wake('deploy', 4))).toBe('deploy 4');

    // A key only a restart applies is named; the mapping change beside it applies at once.
    const moved = configText(HOOK_TOKEN, GATEWAY_TOKEN, CI.replace('build {{n}}', 'built {{n}}')).replace(
      'port: 0',
      'port: 1',
    );
    writeFileSync(file, moved);
    await expect.poll(() => logged('configuration reloaded').length, { timeout: 15_000 }).toBe(2);
    expect(JSON.parse(logged('configuration changed where only a restart applies it')[0] as string).keys).toEqual([
      'server',
    ]);
    expect(await eventText(await wake('ci', 5))).toBe('built 5');
    expect(await wake('deploy', 6)).toBe('404 NO_MAPPING');

    // The file moved away (a branch without it): refused, not the embedded default's no mappings.
    renameSync(file, `${file}.bak`);
    await expect
      .poll(() => logged('configuration reload failed; the running one is kept').length, { timeout: 15_000 })
      .toBe(2);
    expect(await eventText(await wake('ci', 7))).toBe('built 7');
    expect(existsSync(join(dir, 'data/hook-token'))).toBe(false);
  }, 60_000);

  it('reloads on SIGHUP (what systemctl reload sends) instead of ending', async () => {
    const dir = folder(configText(HOOK_TOKEN, GATEWAY_TOKEN, CI), '');
    const hookd = await serve(dir);
    hookd.child.kill('SIGHUP');
    await expect
      .poll(() => hookd.stdout().includes('"msg":"SIGHUP: reloading the configuration"'), { timeout: 15_000 })
      .toBe(true);
    expect((await call(`${hookd.url}/healthz`, { method: 'GET' })).status).toBe(200);
    expect(hookd.child.exitCode).toBeNull();
  });

  it('reloads a config file that is a symbolic link when the file it points to changes', async () => {
    const dir = folder(configText(HOOK_TOKEN, GATEWAY_TOKEN, CI), '');
    const other = makeTempDir();
    cleanups.push(other.cleanup);
    const real = join(other.dir, 'real.json5');
    renameSync(join(dir, 'hookd.json5'), real);
    symlinkSync(real, join(dir, 'hookd.json5'));
    const hookd = await serve(dir);
    const deploy = `{ id: 'deploy', match: { path: 'deploy' }, action: 'wake', textTemplate: 'deploy {{n}}' }`;
    writeFileSync(real, configText(HOOK_TOKEN, GATEWAY_TOKEN, `${CI}, ${deploy}`));
    await expect.poll(() => hookd.stdout().includes('"msg":"configuration reloaded"'), { timeout: 15_000 }).toBe(true);
    expect((await call(`${hookd.url}/hooks/deploy`, { headers: HOOK, json: { n: 1 } })).status).toBe(200);
  });

  it('warns at start of a data folder other users can write to, naming it, and only of that one', async () => {
    const shared = folder(configText(HOOK_TOKEN, GATEWAY_TOKEN, CI), '');
    mkdirSync(join(shared, 'data'), { mode: 0o700 });
    chmodSync(join(shared, 'data'), 0o1777);
    const warned = (p: HookdProcess) =>
      p
        .stdout()
        .split('\n')
        .filter((line) => line.includes('other users can write to this data folder'))
        .map((line) => JSON.parse(line) as { level: number; folder: string; mode: string });
    const hookd = await serve(shared);
    expect(warned(hookd)).toEqual([expect.objectContaining({ level: 40, folder: join(shared, 'data'), mode: '1777' })]);
    const own = await serve(folder(configText(HOOK_TOKEN, GATEWAY_TOKEN, CI), ''));
    expect(warned(own)).toEqual([]);
  });

  it('warns of a data folder another user owns, and of a folder above that others can write to without the sticky bit', async () => {
    const dir = folder(configText(HOOK_TOKEN, GATEWAY_TOKEN, CI), '');
    mkdirSync(join(dir, 'data'), { mode: 0o700 });
    chownSync(join(dir, 'data'), 65534, 65534);
    chmodSync(dir, 0o777);
    const hookd = await serve(dir);
    const warnings = hookd
      .stdout()
      .split('\n')
      .filter((line) => line.includes('"level":40') && line.includes('folder'))
      .map((line) => JSON.parse(line) as { msg: string; folder: string; uid?: number; mode?: string });
    expect(warnings).toEqual([
      expect.objectContaining({
        folder: join(dir, 'data'),
        uid: 65534,
        msg: expect.stringMatching(/belongs to another user/),
      }),
      expect.objectContaining({ folder: dir, mode: '0777', msg: expect.stringMatching(/can replace the data folder/) }),
    ]);
    // A folder under /tmp (sticky, root's) and a data folder of one's own: no warning.
    chmodSync(dir, 0o700);
    chownSync(join(dir, 'data'), process.getuid?.() ?? 0, process.getgid?.() ?? 0);
    const own = await serve(dir);
    expect(own.stdout()).not.toMatch(/another user|other users/);
  });
});
