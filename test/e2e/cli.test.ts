import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { holdFixedPort } from '../helpers/fixed-port.js';
import { makeTempDir, ROOT, runHookd, startHookd, writeConfig } from '../helpers/hookd-process.js';
import { call } from '../helpers/http.js';

const sh = promisify(execFile);
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  // Last made, first undone: a gateway stops before its folder goes.
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

describe('hookd serve with no config (the embedded default)', () => {
  it('prints the token once and a curl that stores a wake event', async () => {
    const temp = makeTempDir();
    cleanups.push(temp.cleanup);
    // The embedded default listens on 8787: held against this machine's other test runs (a
    // second clone's suite beside this one) and anything else listening there. What it says
    // to people is on stderr: stdout holds the JSON log lines alone.
    cleanups.push(await holdFixedPort(8787, 240_000));
    const first = await startHookd({ dir: temp.dir });
    cleanups.push(() => first.stop());
    const token = readFileSync(join(temp.dir, 'data/hook-token'), 'utf8').trim();
    expect(first.url).toBe('http://127.0.0.1:8787');
    expect(first.stderr()).toContain(`generated a hook token (shown once`);
    expect(first.stderr()).toContain(token);
    const curl = /^ {2}(curl .*)$/m.exec(first.stderr())?.[1];
    expect(curl).toBeDefined();
    const { stdout } = await sh('sh', ['-c', curl as string], { cwd: temp.dir });
    const answer = JSON.parse(stdout) as { ok: boolean; mode: string; eventId: string };
    expect(answer).toEqual({ ok: true, mode: 'now', eventId: expect.any(String) });
    // The console line names a page that answers and a token file that exists.
    const consoleLine = /console is at (\S+) \(sign in with the gateway token in (\S+)\)/.exec(first.stderr());
    expect(consoleLine?.[1]).toBe('http://127.0.0.1:8787/ui/');
    expect((await call(consoleLine?.[1] as string, { method: 'GET' })).text).toContain('Gateway token');
    expect(readFileSync(consoleLine?.[2] as string, 'utf8').trim()).toMatch(/^\S{20,}$/);
    await first.stop();

    const db = new Database(join(temp.dir, 'data/hookd.db'), { readonly: true });
    expect(db.prepare('SELECT text FROM events WHERE id = ?').get(answer.eventId)).toEqual({ text: 'Hello from curl' });
    db.close();

    const second = await startHookd({ dir: temp.dir });
    cleanups.push(() => second.stop());
    expect(second.stderr()).not.toContain(token);
    expect(second.stderr()).toContain('curl -sS');
  }, 300_000);
});

describe('startup refusals', () => {
  it('refuses a hook token equal to the gateway token', async () => {
    const temp = makeTempDir();
    cleanups.push(temp.cleanup);
    const token = 'same-token-0123456789abcdef';
    const file = writeConfig(temp.dir, { gateway: { auth: { token } }, hooks: { enabled: true, token } });
    const result = await runHookd(['serve', '--config', file]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/hooks\.token: must differ from gateway\.auth\.token/);
    expect(result.stderr).not.toContain(token);
  });

  it('refuses a hook token equal to the generated gateway token stored in the data folder', async () => {
    const temp = makeTempDir();
    cleanups.push(temp.cleanup);
    const file = writeConfig(temp.dir, { hooks: { enabled: true, token: 'first-token-0123456789abcdef' } });
    const first = await startHookd({ dir: temp.dir, args: ['--config', file] });
    await first.stop();
    const gatewayToken = readFileSync(join(temp.dir, 'data/gateway-token'), 'utf8').trim();
    writeConfig(temp.dir, { hooks: { enabled: true, token: gatewayToken } });
    const result = await runHookd(['serve', '--config', file]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/hooks\.token: must differ from gateway\.auth\.token/);
  });

  it('exits non-zero, instead of lingering, when the store cannot be opened after transforms are watched', async () => {
    const temp = makeTempDir();
    cleanups.push(temp.cleanup);
    cpSync(join(ROOT, 'test/fixtures/transforms'), join(temp.dir, 'transforms'), { recursive: true });
    const file = writeConfig(temp.dir, {
      gateway: { auth: { token: 'store-fail-gateway-0123456789' } },
      hooks: {
        enabled: true,
        token: 'store-fail-token-0123456789',
        mappings: [{ match: { path: 'x' }, transform: { module: 'counter.js' } }],
      },
      // A path below a regular file: the store's folder cannot be made.
      storage: { path: join(temp.dir, 'hookd.json5', 'data', 'hookd.db') },
    });
    const started = Date.now();
    // A gateway that lingers never exits: it is killed at 30 s, without the exit code 1.
    const result = await runHookd(['serve', '--config', file], { timeoutMs: 30_000 });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/ENOTDIR/);
    expect(Date.now() - started).toBeLessThan(25_000);
  });

  it('hookd check exits non-zero naming the key path', async () => {
    const temp = makeTempDir();
    cleanups.push(temp.cleanup);
    const file = writeConfig(temp.dir, { hooks: { enabled: true } });
    const result = await runHookd(['check', '--config', file]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('hooks.token: required when hooks.enabled is true');
  });

  it('hookd token prints a fresh 43-character token', async () => {
    const result = await runHookd(['token']);
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });
});

describe('logs (security rule 3)', () => {
  it('never hold tokens, the authorization header or payload text at info', async () => {
    const token = 'log-capture-token-0123456789';
    const hookd = await startHookd({ config: { hooks: { enabled: true, token }, log: { level: 'info' } } });
    cleanups.push(() => hookd.stop());
    const secretText = 'PAYLOAD-TEXT-7f3a9c';
    await call(`${hookd.url}/hooks/wake`, {
      headers: { authorization: `Bearer ${token}` },
      json: { text: secretText },
    });
    await call(`${hookd.url}/hooks/agent`, { headers: { 'x-service-token': token }, json: { message: secretText } });
    await call(`${hookd.url}/hooks/wake?token=${token}`, { json: { text: secretText } });
    await call(`${hookd.url}/hooks/wake`, {
      headers: { authorization: 'Bearer wrong-guess-abc' },
      json: { text: secretText },
    });
    await call(`${hookd.url}/hooks/wake`, {
      headers: { authorization: `Bearer ${token}` },
      body: `{"text":"${secretText}`,
    });
    await expect.poll(() => hookd.stdout()).toContain('missing or invalid token');
    await hookd.stop();
    const logs = hookd.stdout() + hookd.stderr();
    expect(logs).toContain('query parameter is deprecated');
    expect(logs).toContain('missing or invalid token');
    for (const secret of [token, secretText, 'wrong-guess-abc', '"authorization"', 'x-service-token"']) {
      expect(logs).not.toContain(secret);
    }
  });
});

describe('hookd --version and hookd completion (docs/cli.md)', () => {
  it('prints the package version for --version and -V', async () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    for (const flag of ['--version', '-V']) {
      const result = await runHookd([flag]);
      expect(result.code).toBe(0);
      expect(result.stdout.trim()).toBe(version);
    }
  });

  it('completes commands, subcommands, flags and files in a real bash from the script it prints', async () => {
    const temp = makeTempDir();
    cleanups.push(temp.cleanup);
    const script = await runHookd(['completion', 'bash']);
    expect(script.code).toBe(0);
    writeFileSync(join(temp.dir, 'hookd.bash'), script.stdout);
    mkdirSync(join(temp.dir, 'fixtures'));
    writeFileSync(join(temp.dir, 'fixtures/push.json'), '{}');
    /** What bash offers for the words typed so far (the last one being completed). */
    const complete = async (...words: string[]) => {
      const line = words.map((w) => `'${w}'`).join(' ');
      const { stdout } = await sh(
        'bash',
        [
          '-c',
          `source hookd.bash; COMP_WORDS=(${line}); COMP_CWORD=${words.length - 1}; _hookd; printf '%s\\n' "\${COMPREPLY[@]}"`,
        ],
        { cwd: temp.dir },
      );
      return stdout.trim().split('\n').filter(Boolean).sort();
    };
    expect(await complete('hookd', 're')).toEqual(['replay', 'requests']);
    expect(await complete('hookd', 'requests', '--fo')).toEqual(['--follow']);
    expect(await complete('hookd', 'requests', '--since', '1h', '--e')).toEqual(['--event-type']);
    expect(await complete('hookd', 'presets', 't')).toEqual(['test']);
    expect(await complete('hookd', 'presets', 'test', '-')).toEqual(['--help', '-h']);
    expect(await complete('hookd', 'try', 'github', '--fixture', 'fixtures/')).toEqual(['fixtures/push.json']);
    expect(await complete('hookd', 'completion', '')).toEqual(['--help', '-h', 'bash', 'fish', 'zsh']);
    expect(await complete('hookd', 'runs', '--st')).toEqual(['--status']);
  });

  it('prints zsh and fish scripts over the same commands, and refuses another shell', async () => {
    const zsh = await runHookd(['completion', 'zsh']);
    expect(zsh.stdout).toContain('bashcompinit');
    expect(zsh.stdout).toContain("'requests') words='-f --follow");
    // The zsh script is the bash function behind zsh's bash layer: bash reads its syntax.
    await sh('bash', ['-n', '-c', zsh.stdout]);
    const fish = await runHookd(['completion', 'fish']);
    expect(fish.stdout).toContain("complete -c hookd -n '__fish_use_subcommand' -a requests");
    expect(fish.stdout).toContain("complete -c hookd -n '__fish_seen_subcommand_from requests' -s f -l follow");
    expect(fish.stdout).toContain(
      "-n '__fish_seen_subcommand_from presets; and not __fish_seen_subcommand_from list new show test' -a test",
    );
    const other = await runHookd(['completion', 'tcsh']);
    expect(other.code).toBe(1);
    expect(other.stderr).toMatch(/bash, zsh, fish/);
  });
});

describe('the icon', () => {
  it("serves an icon for the console's tab and for the site's root, without a session", async () => {
    const hookd = await startHookd({ config: { hooks: { enabled: true, token: 'icon-hook-token-0123456789' } } });
    cleanups.push(() => hookd.stop());
    const page = await call(`${hookd.url}/ui/`, { method: 'GET' });
    const href = /<link rel="icon" href="([^"]+)" type="image\/svg\+xml">/.exec(page.text)?.[1];
    expect(href).toBe('/ui/favicon.svg');
    const svg = await call(`${hookd.url}${href}`, { method: 'GET' });
    expect(svg.status).toBe(200);
    expect(svg.headers['content-type']).toBe('image/svg+xml');
    expect(svg.text).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    const res = await request(`${hookd.url}/favicon.ico`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('image/x-icon');
    const ico = Buffer.from(await res.body.arrayBuffer());
    // An ICO directory of one 32×32 image, a PNG.
    expect([...ico.subarray(0, 8)]).toEqual([0, 0, 1, 0, 1, 0, 32, 32]);
    expect(ico.subarray(22, 26).toString('latin1')).toBe('\x89PNG');
  });
});
