import { execFileSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { cpSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeTempDir, ROOT, runHookd, startHookd, writeConfig } from '../helpers/hookd-process.js';
import { type Answer, call } from '../helpers/http.js';

/**
 * Plugins made only of data, as an attacker would write them: the real CLI, a real socket.
 * docs/presets.md#what-a-plugin-can-and-cannot-do is the contract.
 */

const PLUGINS = join(ROOT, 'test/fixtures/plugins');
const TOKEN = 'operator-hook-token-0123456789';
const PUBLIC_SECRET = 'the-public-secret';
const GATEWAY_TOKEN = 'plugin-hardening-gateway-token-0123456789';
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
        presets: [{ name: 'hostile' }],
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
      // Sessions of the built-in GitHub preset.
      new RegExp(
        `${manifest}hooks\\.presets\\[0\\] \\(plugin:hostile:squat\\)\\.sessionKey: the hostile plugin names the sessions "hook:github:\\{\\{repo\\}\\}"; a plugin's sessions are hook:hostile:…`,
      ),
      // A signature secret that is the entry's public name.
      new RegExp(
        `${manifest}hooks\\.plugins\\[0\\]: plugin "\\./plugins/hostile": verify\\.secretOption: "name" is a key of the operator's entry, not a secret`,
      ),
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

/** A folder with the fixture plugins `names` copied into plugins/, and a config enabling them (by their folders' names, or `hooks.presets`). */
function withPlugins(names: readonly string[], hooks: Record<string, unknown> = {}) {
  const dir = tempDir();
  for (const name of names) cpSync(join(PLUGINS, name), join(dir, `plugins/${name}`), { recursive: true });
  const config = {
    hooks: {
      enabled: true,
      token: TOKEN,
      plugins: names.map((name) => `./plugins/${name}`),
      presets: [...names],
      ...hooks,
    },
    agents: { defaults: { heartbeat: { every: '0' } } },
  };
  return { dir, config, file: writeConfig(dir, config) };
}

const bearer = { authorization: `Bearer ${TOKEN}` };

describe("a plugin's payload schema, bounded in cost", () => {
  it('refuses patterns that could hold the thread for seconds, in check and serve, at the pattern', async () => {
    const { dir, file } = withPlugins(['costly'], { maxBodyBytes: 65_536 });
    const checked = await runHookd(['check', '--config', file], { cwd: dir });
    const out = checked.stdout + checked.stderr;
    expect(checked.code, out).toBe(1);
    expect(out).toMatch(
      /plugins\/costly\/preset\.json5:\d+:\d+: error: hooks\.presets\[0\] \(plugin:costly:heavy\)\.schema: its patterns could take 78\d,\d{3},\d{3} steps on one payload, above the 8,388,608 a check may take \(\/properties\/text\/allOf\/0\/pattern "\(\?:\\\\w\\\\w\?\)\{1000\}\$": 3,003 instructions × 65,536 characters/,
    );
    expect(out).not.toContain('configuration OK');
    const serve = await runHookd(['serve', '--config', file], { cwd: dir });
    expect(serve.code).toBe(1);
    expect(serve.stderr).toContain('(plugin:costly:heavy).schema');
  });

  it("answers /healthz within seconds, not minutes, while the bounded schemas' worst requests are checked", async () => {
    const { dir, config } = withPlugins(['bounded'], { maxBodyBytes: 1024 * 1024 });
    const hookd = await startHookd({ dir, config });
    cleanups.push(() => hookd.stop());
    const timed = async (answer: Promise<Answer>) => {
      const started = performance.now();
      return { ...(await answer), ms: performance.now() - started };
    };
    // The most a check of `text` may cost: 2,700 characters against 3,003 instructions.
    const text = timed(call(`${hookd.url}/hooks/bounded-text`, { headers: bearer, json: { text: 'a'.repeat(2700) } }));
    // 80,000 distinct objects (about 1 MB) under uniqueItems: comparing every pair takes minutes.
    const items = Array.from({ length: 80_000 }, (_, i) => ({ i }));
    const unique = timed(call(`${hookd.url}/hooks/bounded-unique`, { headers: bearer, json: { items } }));
    const health = await timed(call(`${hookd.url}/healthz`, { method: 'GET' }));
    expect(health.status).toBe(200);
    // Each takes well under a second alone; unbounded, the pairs of 80,000 items would hold the
    // thread for minutes. The bounds are that far from both, for a loaded machine (3.7 s once
    // beside other suites).
    expect(health.ms).toBeLessThan(15_000);
    for (const answered of [await text, await unique]) {
      expect(answered.status, answered.text).toBe(200);
      expect(answered.ms).toBeLessThan(20_000);
    }
    // A duplicate is still one.
    const twice = await call(`${hookd.url}/hooks/bounded-unique`, {
      headers: bearer,
      json: { items: [...items, { i: 7 }] },
    });
    expect(twice.status).toBe(400);
    expect(twice.body.error).toMatch(/must NOT have duplicate items \(items ## 7 and 80000 are identical\)/);
  });
});

describe("a plugin's files, read once as regular files", () => {
  it('refuses a FIFO among its files in check, where GET /api/mappings and then the event loop hung', async () => {
    const { dir, file } = withPlugins(['acme-folder', 'sample-src'], {
      presets: ['acme', { name: 'sample', secret: PUBLIC_SECRET }],
    });
    execFileSync('mkfifo', [join(dir, 'plugins/acme-folder/fixtures/deploy-4.json')]);
    rmSync(join(dir, 'plugins/sample-src/transform.ts'));
    execFileSync('mkfifo', [join(dir, 'plugins/sample-src/transform.ts')]);
    const checked = await runHookd(['check', '--config', file], { cwd: dir, timeoutMs: 15_000 });
    const out = checked.stdout + checked.stderr;
    expect(checked.code, out).toBe(1);
    expect(out).toContain(
      'plugin "./plugins/acme-folder": fixtures: "fixtures/deploy-4.json" is a FIFO, not a regular file',
    );
    expect(out).toMatch(/plugins\/sample-src\/transform\.ts is a FIFO, not a regular file/);
  });

  it('serves a fixture as it was read at start, never through a symlink swapped in later', async () => {
    const { dir, config } = withPlugins(['acme-folder'], { presets: ['acme'] });
    const hookd = await startHookd({ dir, config: { ...config, gateway: { auth: { token: GATEWAY_TOKEN } } } });
    cleanups.push(() => hookd.stop());
    const fixture = join(dir, 'plugins/acme-folder/fixtures/deploy-1.json');
    const recorded = JSON.parse(readFileSync(fixture, 'utf8'));
    writeFileSync(join(dir, 'outside.json'), JSON.stringify({ headers: {}, body: { secret: 'the operator file' } }));
    rmSync(fixture);
    symlinkSync(join(dir, 'outside.json'), fixture);
    const served = await call(`${hookd.url}/api/presets/acme/fixtures/deploy-1`, {
      method: 'GET',
      headers: { authorization: `Bearer ${GATEWAY_TOKEN}` },
    });
    expect(served.status).toBe(200);
    expect(served.body).toEqual({ headers: recorded.headers, body: recorded.body });
    expect(served.text).not.toContain('the operator file');
  });
});

describe("a plugin's sessions are its own", () => {
  it('hookd try fails a transform that names a session outside hook:<plugin>:, and shows one inside', async () => {
    const { dir, file } = withPlugins(['squatter']);
    const tryKey = async (key: string) => {
      writeFileSync(join(dir, 'payload.json'), JSON.stringify({ key, text: 'push' }));
      return runHookd(['try', 'squatter', '--config', file, '--payload', 'payload.json'], { cwd: dir });
    };
    const github = await tryKey('hook:github:acme/site');
    expect(github.code).toBe(1);
    expect(github.stderr).toContain(
      `a plugin's runs keep to its own sessions, hook:squatter:… (its sessionKey is "hook:github:acme/site")`,
    );
    expect(github.stdout).not.toContain('hook:github:acme/site');
    const own = await tryKey('hook:squatter:acme/site');
    expect(own.code, own.stderr).toBe(0);
    expect(JSON.parse(own.stdout)).toMatchObject({
      actions: [{ kind: 'agent', sessionKey: 'hook:squatter:acme/site' }],
    });
    const none = await tryKey('');
    expect(JSON.parse(none.stdout).actions[0].sessionKey).toMatch(/^hook:squatter:[0-9a-f-]{36}$/);
  });
});

describe("a plugin's text on the operator's terminal", () => {
  /** Every character a terminal takes as a command: C0 but tab and new line, DEL, C1. */
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
  const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

  it('shows control characters as escapes in presets list, presets show, check and try', async () => {
    const { dir, file } = withPlugins(['noisy']);
    writeFileSync(join(dir, 'payload.json'), '{}');
    const runs = {
      list: await runHookd(['presets', 'list', '--config', file], { cwd: dir }),
      show: await runHookd(['presets', 'show', './plugins/noisy'], { cwd: dir }),
      check: await runHookd(['check', '--config', file, '--json'], { cwd: dir }),
      try: await runHookd(['try', 'noisy', '--config', file, '--payload', 'payload.json'], { cwd: dir }),
    };
    for (const [command, run] of Object.entries(runs)) {
      expect(CONTROL.test(run.stdout + run.stderr), `${command}: ${JSON.stringify(run.stdout + run.stderr)}`).toBe(
        false,
      );
    }
    expect(runs.list.stdout).toContain('Noisy\\u001b]52;c;cHduZWQ=\\u0007\\u001b[2K plugin\\u007f');
    expect(runs.list.stdout).toContain('1.0.0\\u009b31m');
    expect(runs.show.stdout).toContain('holds \\u001b]52;c;cHduZWQ=\\u0007 an OSC 52');
    // JSON stays the same data.
    expect(JSON.parse(runs.check.stdout)).toMatchObject({ ok: true });
    expect(runs.try.code).toBe(1);
    expect(runs.try.stderr).toContain('boom\\u001b[2K\\u001b]52;c;cHduZWQ=\\u0007');
  });
});
