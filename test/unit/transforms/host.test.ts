import { cpSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/index.js';
import { type HookdError, isHookdError } from '../../../src/errors.js';
import { createTransformHost } from '../../../src/transforms/index.js';
import { makeTempDir, ROOT } from '../../helpers/hookd-process.js';
import { hostConfig } from '../../helpers/transforms.js';

let temp: ReturnType<typeof makeTempDir>;
let dir: string;
beforeEach(() => {
  temp = makeTempDir();
  dir = join(temp.dir, 'transforms');
  cpSync(join(ROOT, 'test/fixtures/transforms'), dir, { recursive: true });
});
afterEach(() => temp.cleanup());

const logs: string[] = [];
beforeEach(() => {
  logs.length = 0;
});
const log = pino({ level: 'info' }, { write: (line: string) => logs.push(line) });
const hostFor = (mappings: unknown[], extra: { watch?: boolean } = {}) =>
  createTransformHost({
    ...hostConfig(loadConfig({ data: { hooks: { transformsDir: dir, mappings } }, env: {} })),
    log,
    ...extra,
    debounceMs: 20,
  });
/** How many times the host has logged `msg` so far. */
const logged = (msg: string) => logs.filter((line) => line.includes(`"msg":"${msg}"`)).length;

describe('loading transforms', () => {
  it('refuses a module without the named export', async () => {
    const err = await hostFor([{ transform: { module: 'counter.js', export: 'nope' } }]).catch((e: unknown) => e);
    expect(isHookdError(err, 'CONFIG_INVALID')).toBe(true);
    expect((err as HookdError<'CONFIG_INVALID'>).params.problems[0]).toMatch(
      /counter\.js: the module exports no function named nope/,
    );
  });
});

describe('hot reload', () => {
  it('swaps in an edited transform and keeps the last good version on a broken edit', async () => {
    const file = join(dir, 'live.ts');
    const version = (n: number) => `export default () => ({ message: 'version ${n}' });\n`;
    writeFileSync(file, version(1));
    const host = await hostFor([{ id: 'live', transform: { module: 'live.ts' } }], { watch: true });
    const call = () =>
      host.run('live', { payload: {}, headers: {}, query: {}, path: 'live', url: '/hooks/live', rawBody: '{}' });
    try {
      await expect(call()).resolves.toEqual({ message: 'version 1' });
      writeFileSync(file, version(2));
      await expect.poll(() => logged('transform reloaded'), { interval: 20 }).toBe(1);
      await expect(call()).resolves.toEqual({ message: 'version 2' });
      // The broken edit is seen (its compile error is logged) before the call that must still get version 2.
      writeFileSync(file, "export default () => ({ message: 'broken' ;\n");
      await expect
        .poll(() => logged('transform recompile failed; keeping the last good version'), { interval: 20 })
        .toBeGreaterThan(0);
      await expect(call()).resolves.toEqual({ message: 'version 2' });
      mkdirSync(join(dir, 'lib2'));
      writeFileSync(join(dir, 'lib2/v.ts'), "export const v = 'from an import';\n");
      writeFileSync(file, "import { v } from './lib2/v.js';\nexport default () => ({ message: v });\n");
      await expect.poll(() => logged('transform reloaded'), { interval: 20 }).toBe(2);
      await expect(call()).resolves.toEqual({ message: 'from an import' });
    } finally {
      host.close();
    }
  });

  it('refuses a reload whose module became a symlink out of the folder, keeping the last good version', async () => {
    const file = join(dir, 'moved.ts');
    writeFileSync(file, "export default () => ({ message: 'inside' });\n");
    const outside = join(temp.dir, 'outside.ts');
    writeFileSync(outside, "export default () => ({ message: 'outside' });\n");
    const host = await hostFor([{ id: 'moved', transform: { module: 'moved.ts' } }]);
    const call = () =>
      host.run('moved', { payload: {}, headers: {}, query: {}, path: 'moved', url: '/hooks/moved', rawBody: '{}' });
    try {
      rmSync(file);
      symlinkSync(outside, file);
      await host.reload();
      expect(logged('transform recompile failed; keeping the last good version')).toBe(1);
      expect(logs.join('\n')).toContain('symlink that leads out');
      await expect(call()).resolves.toEqual({ message: 'inside' });
    } finally {
      host.close();
    }
  });
});

describe('compiling in the folder', () => {
  it("never reads the folder's tsconfig.json, nor what it extends", async () => {
    writeFileSync(join(temp.dir, 'secret.json'), 'TOPSECRET_0123 is not JSON');
    writeFileSync(join(dir, 'tsconfig.json'), '{ "extends": "../secret.json" }');
    writeFileSync(join(dir, 'plain.ts'), "export default () => ({ message: 'fine' });\n");
    const host = await hostFor([{ id: 'plain', transform: { module: 'plain.ts' } }]);
    try {
      const input = { payload: {}, headers: {}, query: {}, path: 'p', url: '/hooks/p', rawBody: '{}' };
      await expect(host.run('plain', input)).resolves.toEqual({ message: 'fine' });
      expect(logs.join('\n')).not.toContain('TOPSECRET');
    } finally {
      host.close();
    }
  });
});
