import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/index.js';
import { type HookdError, isHookdError } from '../../../src/errors.js';
import { createProcessTransformHost, type TransformHost } from '../../../src/transforms/index.js';
import { makeTempDir, ROOT } from '../../helpers/hookd-process.js';
import { childrenOf, hostConfig, transformContext } from '../../helpers/transforms.js';

/**
 * The transform process as the gateway's host sees it, started from the sources (through tsx):
 * results, located failures and start-up problems cross as they are inline
 * (test/e2e/transform-process.test.ts has its ends and restarts).
 */

/** This process's children that run src/transforms/child.ts. */
const transformProcesses = () => childrenOf(process.pid, 'transforms/child.ts');

// One allocation larger than the room below memoryLimitMb: V8 aborts the process.
const GREEDY =
  'export default ({ payload }: { payload: { count: number } }) => ({ message: String(new Array(payload.count).fill(0).length) });';

const DIR = join(ROOT, 'test/fixtures/transforms');
const context = transformContext;
const configOf = (mappings: unknown[]) =>
  loadConfig({ data: { hooks: { transformsDir: DIR, transforms: { timeoutMs: 1000 }, mappings } }, env: {} });

let host: TransformHost;
const seen: [string, number][] = [];
// What the gateway's environment holds besides the process's own: never the transform process's.
const SECRET = 'probe-secret-0123456789';
const nodeOptions = process.env.NODE_OPTIONS;
beforeAll(async () => {
  process.env.HOOKD_PROBE_SECRET = SECRET;
  // Could open an inspector on the process, or load code into it.
  process.env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ''} --max-old-space-size=4096`.trim();
  const config = configOf([
    { id: 'toWake', transform: { module: 'hostile.ts', export: 'toWake' } },
    { id: 'throws', transform: { module: 'hostile.ts', export: 'throws' } },
    { id: 'fanned', transform: { module: 'hostile.ts', export: 'toWake' } },
    { id: 'deep', transform: { module: 'hostile.ts', export: 'deep' } },
  ]);
  host = await createProcessTransformHost({
    ...hostConfig(config),
    log: pino({ level: 'silent' }),
    observe: (key, seconds) => seen.push([key, seconds]),
  });
}, 60_000);
afterAll(() => {
  host.close();
  delete process.env.HOOKD_PROBE_SECRET;
  if (nodeOptions === undefined) delete process.env.NODE_OPTIONS;
  else process.env.NODE_OPTIONS = nodeOptions;
});

describe('the transform process, from the gateway', () => {
  it('answers a result, and tells how long the call took', async () => {
    expect(host.size).toBe(4);
    await expect(host.run('toWake', context({ alert: 'disk' }))).resolves.toEqual({
      kind: 'wake',
      text: 'alert: disk',
    });
    expect(seen.at(-1)?.[0]).toBe('toWake');
    expect(seen.at(-1)?.[1]).toBeGreaterThan(0);
  });

  it('sends a payload that is not the body as JSON (a fan-out item)', async () => {
    const item = { ...context({ alert: 'body' }), payload: { alert: 'item' }, payloadIsJsonOfRawBody: false };
    await expect(host.run('fanned', item)).resolves.toEqual({ kind: 'wake', text: 'alert: item' });
  });

  it("gives a transform's failure with its site, as the inline host does", async () => {
    const err = (await host.run('throws', context({})).catch((e: unknown) => e)) as HookdError<'TRANSFORM_FAILED'>;
    expect(isHookdError(err, 'TRANSFORM_FAILED')).toBe(true);
    expect(err.message).toMatch(/^transform failed: hostile\.ts:46:9: cannot handle this payload$/);
    expect(err.params.location).toEqual({ file: 'hostile.ts', line: 46, column: 9 });
    expect(err.params.codeFrame).toMatch(/> 46 \|/);
    expect(err.statusCode).toBe(500);
  });

  it("keeps the gateway's secrets from the process: it gets the path and the locale, not the rest", () => {
    const [pid] = transformProcesses();
    const environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    expect(environ.some((entry) => entry.startsWith('PATH='))).toBe(true);
    expect(environ.join('\n')).not.toContain(SECRET);
    expect(environ.filter((entry) => entry.startsWith('HOOKD_') || entry.startsWith('NODE_OPTIONS='))).toEqual([]);
  });

  it('fails a call whose result nests too deep for the channel, and only that call: the process goes on', async () => {
    const [pid] = transformProcesses();
    // JSON written recursively runs out of stack at about 5,000 levels: the process ended, and
    // took the calls beside with it.
    const [deep, beside] = await Promise.allSettled([
      host.run('deep', context({ depth: 5000 })),
      host.run('toWake', context({ alert: 'beside' })),
    ]);
    expect(deep).toMatchObject({ status: 'rejected', reason: { code: 'TRANSFORM_FAILED' } });
    // Which guard says it depends on the thread the call ran on: the isolate's stack, or the depth check.
    expect((deep as PromiseRejectedResult).reason.message).toMatch(
      /its result nests (deeper than 64 levels|too deep to be written as JSON)/,
    );
    expect(beside).toEqual({ status: 'fulfilled', value: { kind: 'wake', text: 'alert: beside' } });
    expect(transformProcesses()).toEqual([pid]);
  });

  it('fails a call of a mapping it does not know as the inline host does', async () => {
    await expect(host.run('nobody', context({}))).rejects.toMatchObject({ code: 'TRANSFORM_FAILED' });
  });
});

describe('a transform process that cannot start', () => {
  it('throws CONFIG_INVALID naming the file, and leaves no process behind', async () => {
    const config = configOf([{ id: 'broken', transform: { module: 'broken.ts' } }]);
    const err = await createProcessTransformHost({ ...hostConfig(config), log: pino({ level: 'silent' }) }).catch(
      (e: unknown) => e,
    );
    expect(isHookdError(err, 'CONFIG_INVALID')).toBe(true);
    expect((err as HookdError<'CONFIG_INVALID'>).params.problems.join('\n')).toMatch(/broken\.ts/);
    const deadline = Date.now() + 5000;
    while (transformProcesses().length > 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    // The one left is the first suite's, still serving.
    expect(transformProcesses()).toHaveLength(1);
  }, 60_000);
});

describe('a transform process closed while it starts again', () => {
  it('is not started again', async () => {
    const { dir, cleanup } = makeTempDir();
    try {
      writeFileSync(join(dir, 'greedy.ts'), GREEDY);
      const config = loadConfig({
        data: {
          hooks: {
            transformsDir: dir,
            // V8's abort takes over 2 s on a loaded machine: within 1 s (and its grace) it was stopped for want of an answer.
            transforms: { memoryLimitMb: 32, timeoutMs: 5000 },
            mappings: [{ id: 'greedy', transform: { module: 'greedy.ts' } }],
          },
        },
        env: {},
      });
      const greedy = await createProcessTransformHost({ ...hostConfig(config), log: pino({ level: 'silent' }) });
      const before = transformProcesses().length;
      // Closed the moment the process's end fails the call, before its restart is due.
      const err = await greedy.run('greedy', context({ count: 2 ** 27 })).catch((e: unknown) => {
        greedy.close();
        return e;
      });
      expect((err as Error).message).toMatch(/the transform process ended \(SIGABRT\)/);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect(transformProcesses()).toHaveLength(before - 1);
    } finally {
      cleanup();
    }
  }, 60_000);
});
