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
const LAZY = ['esbuild', 'isolated-vm', 'imapflow', 'mailparser', 'undici'] as const;
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
  return { hookd, loaded };
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

  it('loads esbuild and isolated-vm for a config with a transform', async () => {
    const { loaded } = await gateway({
      hooks: { enabled: true, token: TOKEN, mappings: [{ match: { path: 'x' }, transform: { module: 'counter.js' } }] },
    });
    expect(loaded()).toEqual(['esbuild', 'isolated-vm']);
  });
});
