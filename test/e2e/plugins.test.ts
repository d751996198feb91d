import { execFile } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeModel } from '../helpers/fake-model.js';
import { makeTempDir, ROOT, runHookd, startHookd, writeConfig } from '../helpers/hookd-process.js';
import { call } from '../helpers/http.js';

const run = promisify(execFile);
const PLUGINS = join(ROOT, 'test/fixtures/plugins');
const TOKEN = 'plugin-hook-token-0123456789';
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  // Last made, first undone: a gateway stops before its folder goes.
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

describe('third-party preset plugins', () => {
  it('loads one from an npm package and one from a folder, and both run end to end', async () => {
    const temp = makeTempDir();
    cleanups.push(temp.cleanup);
    // The packed sample plugin, installed the way a user installs one: into the config's folder.
    writeFileSync(join(temp.dir, 'package.json'), '{ "name": "site", "private": true }');
    await run(
      'npm',
      ['install', '--no-save', '--offline', '--no-audit', '--no-fund', join(PLUGINS, 'hookd-preset-sample-1.0.0.tgz')],
      {
        cwd: temp.dir,
      },
    );
    cpSync(join(PLUGINS, 'acme-folder'), join(temp.dir, 'plugins/acme'), { recursive: true });
    const model = await startFakeModel(() => 'noted');
    cleanups.push(() => model.close());
    const hookd = await startHookd({
      dir: temp.dir,
      config: {
        hooks: {
          enabled: true,
          token: TOKEN,
          plugins: ['hookd-preset-sample', './plugins/acme'],
          presets: [{ name: 'sample', secret: 'sample-secret', prefix: 'Home' }, 'acme'],
        },
        agents: { defaults: { model: 'fake/m', heartbeat: { every: '0' } } },
        models: { providers: { fake: { baseUrl: model.url, api: 'openai-chat' } } },
      },
    });
    cleanups.push(() => hookd.stop());
    const sawText = (text: string) => model.requests.some((r) => r.messages.some((m) => m.content.includes(text)));

    const raw = JSON.stringify({ service: 'nas', status: 'down' });
    const signature = createHmac('sha256', 'sample-secret').update(raw).digest('hex');
    const wake = await call(`${hookd.url}/hooks/sample`, {
      headers: { 'content-type': 'application/json', 'x-signature': signature },
      body: raw,
    });
    expect(wake.status).toBe(200);
    await expect.poll(() => sawText('Home: nas is down')).toBe(true);
    const unsigned = await call(`${hookd.url}/hooks/sample`, {
      headers: { 'content-type': 'application/json' },
      body: raw,
    });
    expect(unsigned.status).toBe(401);

    const deploy = await call(`${hookd.url}/hooks/acme`, {
      headers: { authorization: `Bearer ${TOKEN}` },
      json: { id: 'd7', app: 'shop', status: 'failed' },
    });
    expect(deploy.status).toBe(202);
    await expect.poll(() => sawText('Deploy d7 of shop failed')).toBe(true);
  });

  it('stops check and serve with the plugin and why: a bad manifest, a transform that does not compile, a package not installed', async () => {
    const temp = makeTempDir();
    cleanups.push(temp.cleanup);
    mkdirSync(join(temp.dir, 'plugins/bad'), { recursive: true });
    writeFileSync(join(temp.dir, 'plugins/bad/preset.json5'), "{ name: 'bad', description: 'x', version: '1' }");
    cpSync(join(PLUGINS, 'sample-src'), join(temp.dir, 'plugins/broken'), { recursive: true });
    writeFileSync(join(temp.dir, 'plugins/broken/transform.ts'), 'export default function (x: number {\n');
    const file = writeConfig(temp.dir, {
      hooks: {
        enabled: true,
        token: TOKEN,
        plugins: ['./plugins/bad', './plugins/broken', 'hookd-preset-missing'],
        presets: [{ name: 'sample', secret: 's' }],
      },
    });
    const check = await runHookd(['check', '--config', file], { cwd: temp.dir });
    expect(check.code).toBe(1);
    expect(check.stderr).toMatch(
      /plugins\/bad\/preset\.json5:1:1: error: hooks\.plugins\[0\]: plugin "\.\/plugins\/bad": mappings: required/,
    );
    expect(check.stderr).toMatch(
      /hooks\.plugins\[2\]: plugin "hookd-preset-missing": no npm package "hookd-preset-missing" is installed/,
    );
    expect(check.stderr).toMatch(
      /plugins\/broken\/transform\.ts:1:\d+: error: hooks\.presets\[0\] \(plugin:sample:preset:sample\)\.transform\.module: Expected/,
    );
    const serve = await runHookd(['serve', '--config', file], { cwd: temp.dir });
    expect(serve.code).toBe(1);
    expect(serve.stderr).toContain('hookd-preset-missing');
  });
});
