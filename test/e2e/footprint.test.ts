import { cpSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeTempDir, ROOT, startHookd } from '../helpers/hookd-process.js';
import { call } from '../helpers/http.js';

/**
 * `hookd serve` loads what its config uses and no more (docs/operations.md#start-up-and-memory):
 * the packages below are loaded on first use. A preload records every CommonJS module the
 * gateway loads; each of these packages is CommonJS.
 */
const LAZY = ['esbuild', 'isolated-vm', 'imapflow', 'mailparser', 'undici', 'ajv', 're2js'] as const;
/** Built-ins that dependencies require at load for what hookd does not use (scripts/build.mjs). */
const UNUSED_BUILTINS = ['node:http2', 'node:https', 'node:tls', 'node:zlib', 'node:v8'];
const TOKEN = 'footprint-hook-token-0123456789';
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  // Last made, first undone: a gateway stops before its folder goes.
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

async function gateway(config: Record<string, unknown>) {
  const temp = makeTempDir('hookd-footprint-');
  cleanups.push(temp.cleanup);
  const loads = join(temp.dir, 'loads.txt');
  const env = {
    NODE_OPTIONS: `--require ${join(ROOT, 'test/fixtures/footprint/record-loads.cjs')}`,
    HOOKD_LOADS_FILE: loads,
  };
  cpSync(join(ROOT, 'test/fixtures/transforms'), join(temp.dir, 'transforms'), { recursive: true });
  const hookd = await startHookd({ dir: temp.dir, config, env });
  cleanups.push(() => hookd.stop());
  /** The lazily loaded packages the gateway has loaded so far. */
  const loaded = () => {
    const files = existsSync(loads) ? readFileSync(loads, 'utf8') : '';
    // tsx compiles src/ with esbuild: a gateway started while dist/ was older than src/ (a file
    // edited during the run) proves nothing here.
    if (files.includes('/node_modules/tsx/'))
      throw new Error('the gateway ran src/ through tsx: dist/ is older than src/');
    return LAZY.filter((name) => files.includes(`/node_modules/${name}/`));
  };
  /** The unused built-ins the gateway loaded, read once it has stopped. */
  const builtinsLoaded = async () => {
    await hookd.stop();
    const lines = readFileSync(loads, 'utf8').split('\n');
    expect(lines).toContain('node:http');
    return UNUSED_BUILTINS.filter((name) => lines.includes(name));
  };
  return { hookd, loaded, builtinsLoaded };
}

const wake = (url: string) =>
  call(`${url}/hooks/wake`, { headers: { authorization: `Bearer ${TOKEN}` }, json: { text: 'hello' } });

describe('what hookd serve loads', () => {
  it('serves hooks without esbuild, isolated-vm, the mail modules or undici when the config uses none', async () => {
    const { hookd, loaded } = await gateway({ hooks: { enabled: true, token: TOKEN } });
    expect((await wake(hookd.url)).status).toBe(200);
    expect((await call(`${hookd.url}/metrics`, { method: 'GET' })).status).toBe(200);
    // The native SQLite driver is loaded: the recording works.
    expect(readFileSync(join(hookd.dir, 'loads.txt'), 'utf8')).toContain('/node_modules/better-sqlite3/');
    expect(loaded()).toEqual([]);
    // The console's script is bundled on its first request: esbuild comes then.
    expect((await call(`${hookd.url}/ui/app.js`, { method: 'GET' })).status).toBe(200);
    expect(loaded()).toEqual(['esbuild']);
  });

  it('serves hooks without the built-ins only HTTPS, HTTP/2, compression and default metrics use', async () => {
    const { hookd, builtinsLoaded } = await gateway({ hooks: { enabled: true, token: TOKEN } });
    expect((await wake(hookd.url)).status).toBe(200);
    expect((await call(`${hookd.url}/metrics`, { method: 'GET' })).status).toBe(200);
    expect(await builtinsLoaded()).toEqual([]);
  });

  it('listens on a host name, which fastify looks up through its stand-in for dns', async () => {
    const { hookd, builtinsLoaded } = await gateway({
      server: { host: 'localhost' },
      hooks: { enabled: true, token: TOKEN },
    });
    expect(hookd.url).toMatch(/^http:\/\/localhost:\d+$/);
    expect((await wake(hookd.url)).status).toBe(200);
    expect(await builtinsLoaded()).toEqual([]);
  });

  it('loads ajv and re2js for a config with a preset whose options have a schema', async () => {
    const { loaded } = await gateway({
      hooks: { enabled: true, token: TOKEN, presets: ['mail'] },
    });
    expect(loaded()).toEqual(['ajv', 're2js']);
  });

  it('loads esbuild and isolated-vm for a config with a transform', async () => {
    const { loaded } = await gateway({
      hooks: { enabled: true, token: TOKEN, mappings: [{ match: { path: 'x' }, transform: { module: 'counter.js' } }] },
    });
    expect(loaded()).toEqual(['esbuild', 'isolated-vm']);
  });
});
