import { createHmac } from 'node:crypto';
import { cpSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeTempDir, ROOT, runHookd, startHookd, writeConfig } from '../helpers/hookd-process.js';
import { call } from '../helpers/http.js';

/**
 * Plugins made only of data, as an attacker would write them: the real CLI,
 * a real socket. docs/presets.md#what-a-plugin-can-and-cannot-do is the contract.
 */

const PLUGINS = join(ROOT, 'test/fixtures/plugins');
const TOKEN = 'operator-hook-token-0123456789';
const PUBLIC_SECRET = 'the-public-secret';
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  // Last made, first undone: a gateway stops before its folder goes.
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

function tempDir(): string {
  const temp = makeTempDir();
  cleanups.push(temp.cleanup);
  return temp.dir;
}

describe('hookd check on a hostile plugin', () => {
  it('refuses every trick, each with the plugin and the key, and never says configuration OK', async () => {
    const dir = tempDir();
    cpSync(join(PLUGINS, 'hostile'), join(dir, 'plugins/hostile'), { recursive: true });
    // A file outside the plugin's folder, reached through a symlink inside it.
    writeFileSync(join(dir, 'outside.json'), '{ "title": "the operator\'s own file" }');
    symlinkSync(join(dir, 'outside.json'), join(dir, 'plugins/hostile/link-out.json'));
    const file = writeConfig(dir, {
      hooks: {
        enabled: true,
        token: TOKEN,
        mappings: [{ match: { path: 'deploy' }, messageTemplate: 'deploy {{text}}' }],
        plugins: ['./plugins/hostile'],
        presets: ['hostile'],
      },
    });
    const text = await runHookd(['check', '--config', file], { cwd: dir });
    const out = text.stdout + text.stderr;
    expect(text.code, out).toBe(1);
    expect(out).not.toContain('configuration OK');
    const manifest = 'plugins/hostile/preset.json5:\\d+:\\d+: error: ';
    const tricks: RegExp[] = [
      // The operator's id and path, with a signature check of its own and a public secret.
      new RegExp(
        `${manifest}hooks\\.plugins\\[0\\]: plugin "\\./plugins/hostile": mappings\\[0\\]\\.verify: a preset's mapping does not verify signatures itself`,
      ),
      /hookd\.json5:\d+:\d+: error: hooks\.presets\[0\] \(plugin:hostile:hooks\.mappings\[0\]\)\.match\.path: the hostile plugin maps \/deploy, which hooks\.mappings\[0\] maps too/,
      // 1 GiB bodies, day-long runs, a thousand at once.
      new RegExp(
        `${manifest}hooks\\.presets\\[0\\] \\(plugin:hostile:huge\\)\\.maxBodyBytes: the hostile plugin sets maxBodyBytes to 1073741824, above hooks\\.maxBodyBytes \\(262144\\)`,
      ),
      /\(plugin:hostile:huge\)\.timeoutSeconds: the hostile plugin sets timeoutSeconds to 86400, above agents\.defaults\.timeoutSeconds \(600\)/,
      /\(plugin:hostile:huge\)\.maxConcurrent: the hostile plugin sets maxConcurrent to 1000, above agents\.defaults\.maxConcurrentRuns \(4\)/,
      // Files outside its folder.
      /mappings\[2\]\.schema: "\/etc\/passwd" is an absolute path; a preset reads only files in its own folder/,
      /mappings\[3\]\.schema: "\.\.\/\.\.\/\.\.\/\.\.\/\.\.\/\.\.\/etc\/passwd" leads out of the preset's folder/,
      /mappings\[4\]\.schema: "link-out\.json" is a symlink that leads out of the preset's folder/,
      // The safety wrapper.
      /\(plugin:hostile:unwrapped\)\.allowUnsafeExternalContent: the hostile plugin turns the safety wrapper off; only you can/,
      // Patterns a linear-time engine cannot run.
      /\(plugin:hostile:backref\)\.schema: a pattern that cannot be run safely: \/properties\/name\/pattern/,
      /plugin "\.\/plugins\/hostile": options: a pattern that cannot be run safely: \/properties\/tag\/pattern: "\^\(\?=x\)"/,
    ];
    for (const trick of tricks) expect(out).toMatch(trick);
    expect(out).toContain(`hookd: ${tricks.length} problem(s) in the configuration`);
    // Nothing of the files it tried to read is shown.
    expect(out).not.toMatch(/root:|the operator's own file/);

    const json = await runHookd(['check', '--config', file, '--json'], { cwd: dir });
    const report = JSON.parse(json.stdout) as { ok: boolean; findings: { severity: string; path: string }[] };
    expect(report.ok).toBe(false);
    expect(report.findings.filter((f) => f.severity === 'error')).toHaveLength(tricks.length);

    const serve = await runHookd(['serve', '--config', file], { cwd: dir });
    expect(serve.code).toBe(1);
    expect(serve.stderr).toContain('the hostile plugin maps /deploy');
  });
});

describe('a plugin beside your mappings, served', () => {
  /** The impostor plugin (its mapping's id is `hooks.mappings[0]`) beside an operator mapping on every path for `x-kind: deploy`. */
  async function serveImpostor() {
    const dir = tempDir();
    cpSync(join(PLUGINS, 'impostor'), join(dir, 'plugins/impostor'), { recursive: true });
    const hookd = await startHookd({
      dir,
      config: {
        hooks: {
          enabled: true,
          token: TOKEN,
          mappings: [{ match: { headers: { 'x-kind': 'deploy' } }, messageTemplate: 'deploy {{text}}' }],
          plugins: ['./plugins/impostor'],
          presets: [{ name: 'impostor', secret: PUBLIC_SECRET }],
        },
        agents: { defaults: { heartbeat: { every: '0' } } },
      },
    });
    cleanups.push(() => hookd.stop());
    return hookd;
  }

  const signed = (payload: unknown, headers: Record<string, string> = {}) => {
    const body = JSON.stringify(payload);
    const signature = createHmac('sha256', PUBLIC_SECRET).update(body).digest('hex');
    return { headers: { 'content-type': 'application/json', 'x-signature': signature, ...headers }, body };
  };

  it("does not let the plugin's valid signature, without the token, open your mapping", async () => {
    const hookd = await serveImpostor();
    const url = `${hookd.url}/hooks/impostor`;
    // The signature holds: the plugin's own mapping takes it.
    expect((await call(url, signed({ text: 'aaa' }))).status).toBe(202);
    // The same signature on a request your mapping takes: refused, as no token was given.
    const opened = await call(url, signed({ text: 'aaa' }, { 'x-kind': 'deploy' }));
    expect(opened.status).toBe(401);
    expect(opened.body.code).toBe('UNAUTHORIZED');
    // With your token, your mapping runs.
    const yours = await call(url, {
      headers: { authorization: `Bearer ${TOKEN}`, 'x-kind': 'deploy' },
      json: { text: 'aaa' },
    });
    expect(yours.status).toBe(202);
  });

  it('answers /healthz while a payload is checked against ^(a+)+$, and refuses the payload at once', async () => {
    const hookd = await serveImpostor();
    // 40 characters: a backtracking engine takes about 2^40 steps (the issue measured 4.6–6.1 s for 30).
    const evil = call(`${hookd.url}/hooks/impostor`, signed({ text: `${'a'.repeat(40)}!` }));
    const health = call(`${hookd.url}/healthz`, { method: 'GET' });
    const [refused, healthy] = await Promise.all([evil, health]);
    expect(healthy.status).toBe(200);
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ code: 'PAYLOAD_INVALID' });
    // Long inputs too: time linear in the input.
    const long = await call(`${hookd.url}/hooks/impostor`, signed({ text: `${'a'.repeat(100_000)}!` }));
    expect(long.body).toMatchObject({ code: 'PAYLOAD_INVALID' });
  });
});
