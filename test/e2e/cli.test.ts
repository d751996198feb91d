import { execFile } from 'node:child_process';
import { cpSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
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
    // The embedded default listens on 8787; this test needs that port free.
    const first = await startHookd({ dir: temp.dir });
    cleanups.push(() => first.stop());
    const token = readFileSync(join(temp.dir, 'data/hook-token'), 'utf8').trim();
    expect(first.url).toBe('http://127.0.0.1:8787');
    expect(first.stdout()).toContain(`generated a hook token (shown once`);
    expect(first.stdout()).toContain(token);
    const curl = /^ {2}(curl .*)$/m.exec(first.stdout())?.[1];
    expect(curl).toBeDefined();
    const { stdout } = await sh('sh', ['-c', curl as string], { cwd: temp.dir });
    const answer = JSON.parse(stdout) as { ok: boolean; mode: string; eventId: string };
    expect(answer).toEqual({ ok: true, mode: 'now', eventId: expect.any(String) });
    // The console line names a page that answers and a token file that exists.
    const consoleLine = /console is at (\S+) \(sign in with the gateway token in (\S+)\)/.exec(first.stdout());
    expect(consoleLine?.[1]).toBe('http://127.0.0.1:8787/ui/');
    expect((await call(consoleLine?.[1] as string, { method: 'GET' })).text).toContain('Gateway token');
    expect(readFileSync(consoleLine?.[2] as string, 'utf8').trim()).toMatch(/^\S{20,}$/);
    await first.stop();

    const db = new Database(join(temp.dir, 'data/hookd.db'), { readonly: true });
    expect(db.prepare('SELECT text FROM events WHERE id = ?').get(answer.eventId)).toEqual({ text: 'Hello from curl' });
    db.close();

    const second = await startHookd({ dir: temp.dir });
    cleanups.push(() => second.stop());
    expect(second.stdout()).not.toContain(token);
    expect(second.stdout()).toContain('curl -sS');
  });
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
