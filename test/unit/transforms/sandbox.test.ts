import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/index.js';
import type { HookdError } from '../../../src/errors.js';
import type { TransformContext } from '../../../src/mapping/index.js';
import { createTransformHost, type TransformHost } from '../../../src/transforms/index.js';
import { ROOT } from '../../helpers/hookd-process.js';
import { hostConfig } from '../../helpers/transforms.js';

const DIR = join(ROOT, 'test/fixtures/transforms');
const EXPORTS = [
  'loop',
  'asyncLoop',
  'allocate',
  'exit',
  'requireFs',
  'importFs',
  'constructorEscape',
  'fetchLoopback',
  'throws',
  'pollute',
  'readPollution',
  'skip',
  'keep',
  'toWake',
  'chatty',
  'hugeMessage',
  'hugeResult',
  'notJson',
  'unshowable',
  'floodConsole',
  'wasmMemory',
  'deep',
];
const TIMEOUT_MS = 1000;

const context = (payload: unknown): TransformContext => ({
  payload,
  headers: { 'x-github-event': 'push' },
  query: {},
  path: 'x',
  url: '/hooks/x',
  rawBody: JSON.stringify(payload),
});

let host: TransformHost;
const logs: string[] = [];
beforeAll(async () => {
  const config = loadConfig({
    data: {
      hooks: {
        transformsDir: DIR,
        transforms: { timeoutMs: TIMEOUT_MS, memoryLimitMb: 64 },
        mappings: [
          { id: 'typed', transform: { module: 'typed.ts' } },
          { id: 'stealLog', transform: { module: 'steal-log.ts' } },
          { id: 'counter', transform: { module: 'counter.js' } },
          ...EXPORTS.map((name) => ({ id: name, transform: { module: 'hostile.ts', export: name } })),
        ],
      },
    },
    env: {},
  });
  const log = pino({ level: 'debug' }, { write: (line: string) => logs.push(line) });
  host = await createTransformHost({ ...hostConfig(config), log });
});
afterAll(() => host.close());

const failure = (message: RegExp | string) =>
  expect.objectContaining({ code: 'TRANSFORM_FAILED', statusCode: 500, message: expect.stringMatching(message) });

describe('the transform sandbox', () => {
  it('runs a TypeScript transform with a relative import and type annotations', async () => {
    const payload = {
      repository: { full_name: 'acme/site' },
      pusher: { name: 'ada' },
      commits: [{ message: 'a' }, { message: 'b' }],
    };
    await expect(host.run('typed', context(payload))).resolves.toEqual({
      message: 'push: ada pushed 2 commits to acme/site',
      name: 'GitHub',
      sessionKey: 'hook:gh:acme/site',
    });
  });

  it('stops an infinite loop within timeoutMs (+50 ms of CPU), and the transform works again afterwards', async () => {
    for (const name of ['loop', 'asyncLoop']) {
      const started = performance.now();
      const cpu = process.cpuUsage();
      await expect(host.run(name, context({}))).rejects.toEqual(
        failure(`transform failed: timed out after ${TIMEOUT_MS} ms`),
      );
      const { user, system } = process.cpuUsage(cpu);
      // docs/operations.md#limits: timeoutMs + 50 ms. Held to on the CPU time the loop took from
      // the machine (this process's, the loop's thread and the host's together): a loaded
      // machine's delays in waking threads are not in it, and a loop that went on would be.
      expect((user + system) / 1000).toBeLessThan(TIMEOUT_MS + 50);
      // In wall time, a loop given a second budget (after its slice on the event loop, or for
      // its promise) ends after two at least, which no load can shorten; under that, a loaded
      // machine has a whole budget for its own delays.
      expect(performance.now() - started).toBeLessThan(2 * TIMEOUT_MS);
    }
    await expect(
      host.run('typed', context({ repository: { full_name: 'r' }, pusher: { name: 'p' }, commits: [] })),
    ).resolves.toBeTruthy();
  });

  it.each([
    ['exit', /process is not defined/],
    ['requireFs', /Dynamic require of "fs" is not supported/],
    ['importFs', /^transform failed: hostile\.ts:31:14: Not supported$/],
    ['constructorEscape', /process is not defined/],
    ['throws', /^transform failed: hostile\.ts:46:9: cannot handle this payload$/],
  ])("%s fails with the transform's own message", async (name, message) => {
    await expect(host.run(name, context({}))).rejects.toEqual(failure(message));
  });

  it("places a thrown error in the author's source: file:line:column, the author's frames, a code frame", async () => {
    const thrown = (await host
      .run('throws', context({}))
      .catch((err: unknown) => err)) as HookdError<'TRANSFORM_FAILED'>;
    expect(thrown.params).toMatchObject({
      location: { file: 'hostile.ts', line: 46, column: 9 },
      frames: ['at throws (hostile.ts:46:9)'],
      codeFrame: [
        '  45 | export function throws() {',
        "> 46 |   throw new Error('cannot handle this payload');",
        '     |         ^',
        '  47 | }',
      ].join('\n'),
    });
    // Thrown in a module the transform imports, after an await: both files, no bundle or sandbox frame.
    const push = { repository: { full_name: 'acme/site' }, pusher: { name: 'ada' } };
    const nested = (await host
      .run('typed', context(push))
      .catch((err: unknown) => err)) as HookdError<'TRANSFORM_FAILED'>;
    expect(nested.message).toBe(
      "transform failed: lib/format.ts:8:38: Cannot read properties of undefined (reading 'length')",
    );
    expect(nested.params.frames).toEqual([
      'at describePush (lib/format.ts:8:38)',
      expect.stringMatching(/^at (async )?transform \(typed\.ts:10:\d+\)$/),
    ]);
    expect(nested.params.codeFrame).toContain('> 8 |   const count: number = push.commits.length;');
    // Nothing of the host's file system: paths are relative to the transforms folder.
    expect(JSON.stringify(nested.params)).not.toContain(DIR);
  });

  it('has no fetch: a loopback port receives nothing', async () => {
    let hits = 0;
    const server = createServer((_req, res) => {
      hits++;
      res.end('leaked');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    try {
      await expect(host.run('fetchLoopback', context({ url }))).rejects.toEqual(failure(/fetch is not defined/));
      expect(hits).toBe(0);
    } finally {
      server.close();
    }
  });

  it('keeps prototype tampering inside the transform that did it', async () => {
    await host.run('pollute', context({}));
    await expect(host.run('readPollution', context({}))).resolves.toEqual({ message: 'polluted=undefined map=2' });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('passes null, undefined and kind switches through', async () => {
    await expect(host.run('skip', context({}))).resolves.toBeNull();
    await expect(host.run('keep', context({}))).resolves.toBeUndefined();
    await expect(host.run('toWake', context({ alert: 'disk' }))).resolves.toEqual({
      kind: 'wake',
      text: 'alert: disk',
    });
  });

  it('sends console output to the log with the mapping id', async () => {
    await host.run('chatty', context({ n: 7 }));
    await expect.poll(() => logs.join('\n')).toContain('"msg":"seen 7 {\\"nested\\":true}"');
    const line = logs.find((l) => l.includes('seen 7')) ?? '';
    expect(JSON.parse(line)).toMatchObject({ level: 30, mapping: 'chatty', source: 'console' });
    expect(logs.some((l) => l.includes('"level":40') && l.includes('careful'))).toBe(true);
  });

  it('answers concurrent calls each with its own result', async () => {
    // Calls may run in different isolates (a pool per mapping), so nothing here counts on
    // state kept between calls.
    const repos = Array.from({ length: 30 }, (_, i) => `acme/repo-${i}`);
    const typed = await Promise.all(
      repos.map((full_name) =>
        host.run('typed', context({ repository: { full_name }, pusher: { name: 'ada' }, commits: [] })),
      ),
    );
    expect(typed.map((result) => (result as { sessionKey: string }).sessionKey)).toEqual(
      repos.map((name) => `hook:gh:${name}`),
    );
  });

  it('bounds what crosses out of the sandbox: error text 1 KiB, result 1 MiB of JSON, only JSON', async () => {
    const thrown = await host.run('hugeMessage', context({})).catch((err: Error) => err);
    expect(thrown).toEqual(failure(/^transform failed: boom x+…$/));
    expect((thrown as Error).message.length).toBeLessThan(1100);
    await expect(host.run('hugeResult', context({}))).rejects.toEqual(failure(/its result is over 1048576 characters/));
    await expect(host.run('notJson', context({}))).rejects.toEqual(failure(/its result is not JSON/));
    // As deep as a payload may nest (64 levels, the result's object one of them), and no deeper.
    await expect(host.run('deep', context({ depth: 63 }))).resolves.toMatchObject({ text: 'deep' });
    await expect(host.run('deep', context({ depth: 64 }))).rejects.toEqual(
      failure(/its result nests deeper than 64 levels/),
    );
    // Deeper, the isolate's stack may run out as it writes the JSON (where depends on the thread).
    await expect(host.run('deep', context({ depth: 5000 }))).rejects.toEqual(
      failure(/its result nests (deeper than 64 levels|too deep to be written as JSON)/),
    );
    await expect(host.run('unshowable', context({}))).rejects.toEqual(failure(/cannot be shown/));
    // The isolate is still usable afterwards.
    await expect(host.run('keep', context({}))).resolves.toBeUndefined();
  });

  it("bounds a transform's console to 16 lines and 8 KiB per call, at the host's level", async () => {
    logs.length = 0;
    // 3 MB lines, 375 times the budget: 30 MB ones took over the 1 s limit on a loaded machine.
    await expect(host.run('floodConsole', context({ bytes: 3_000_000 }))).resolves.toBeUndefined();
    const lines = logs.map(
      (line) => JSON.parse(line) as { level: number; msg: string; source?: string; dropped?: number },
    );
    const fromConsole = lines.filter((line) => line.source === 'console');
    expect(fromConsole.length).toBeLessThanOrEqual(16);
    expect(fromConsole.reduce((chars, line) => chars + line.msg.length, 0)).toBeLessThanOrEqual(8192);
    expect(lines.find((line) => line.dropped !== undefined)).toMatchObject({ level: 40, dropped: expect.any(Number) });
  });

  it('never lets transform code reach the log function, not even at load', async () => {
    logs.length = 0;
    await expect(host.run('stealLog', context({}))).resolves.toEqual({
      kind: 'wake',
      text: 'the log function was undefined',
    });
    expect(logs.join('\n')).not.toContain('owned');
  });

  it('has no WebAssembly, SharedArrayBuffer or Atomics, whose memory escapes the limit', async () => {
    await expect(host.run('wasmMemory', context({}))).resolves.toBeUndefined();
  });
});

/**
 * A host whose time limit never comes first, however loaded the machine: for calls that take
 * long by design (allocating 64 MB, building a million arrays).
 */
async function patientHost(names: string[]): Promise<TransformHost> {
  const config = loadConfig({
    data: {
      hooks: {
        transformsDir: DIR,
        transforms: { timeoutMs: 60_000, memoryLimitMb: 64 },
        mappings: names.map((name) => ({ id: name, transform: { module: 'hostile.ts', export: name } })),
      },
    },
    env: {},
  });
  return createTransformHost({ ...hostConfig(config), log: pino({ level: 'silent' }) });
}

describe('the memory limit', () => {
  it('kills an allocation of 1 GB at the memory limit and rebuilds the isolate', async () => {
    // A loaded machine took more than 1 s to allocate the 64 MB.
    const limited = await patientHost(['allocate', 'keep']);
    try {
      await expect(limited.run('allocate', context({}))).rejects.toEqual(
        failure('transform failed: exceeded its memory limit of 64 MB'),
      );
      await expect(limited.run('keep', context({}))).resolves.toBeUndefined();
    } finally {
      limited.close();
    }
  });
});

describe('a result deeper than any stack can write', () => {
  it('says it nests too deep to be written as JSON, and the isolate stays usable', async () => {
    // A million arrays take 0.7 s to build and fail to write on an idle machine, more than
    // the 1 s limit of the other tests on a loaded one (a CI run timed out there).
    const patient = await patientHost(['deepest', 'keep']);
    try {
      await expect(patient.run('deepest', context({ depth: 1_000_000 }))).rejects.toEqual(
        failure(/its result nests too deep to be written as JSON/),
      );
      await expect(patient.run('keep', context({}))).resolves.toBeUndefined();
    } finally {
      patient.close();
    }
  });
});

describe('hooks.transforms.allowWasm', () => {
  it('leaves WebAssembly in the sandbox when the operator allows it', async () => {
    const config = loadConfig({
      data: {
        hooks: {
          transformsDir: DIR,
          transforms: { timeoutMs: TIMEOUT_MS, memoryLimitMb: 64, allowWasm: true },
          mappings: [{ id: 'wasm', transform: { module: 'hostile.ts', export: 'wasmMemory' } }],
        },
      },
      env: {},
    });
    const allowing = await createTransformHost({ ...hostConfig(config), log: pino({ level: 'silent' }) });
    try {
      await expect(allowing.run('wasm', context({}))).rejects.toEqual(failure(/present: WebAssembly/));
    } finally {
      allowing.close();
    }
  });
});
