import { afterEach, describe, expect, it } from 'vitest';
import type { TransformContext } from '../../../src/mapping/index.js';
import type { ConsoleLevel, ConsoleSink } from '../../../src/transforms/console.js';
import { type HostCalls, runTransform } from '../../../src/transforms/host.js';
import { createSandbox, type Sandbox } from '../../../src/transforms/sandbox.js';
import { createTransformSlot, type TransformSlot } from '../../../src/transforms/slot.js';

// What a transform can do to the code hookd runs in its isolate: replace the built-ins it
// calls, call back into the host without end, look for hookd's own functions.

/** A bundle as the compiler leaves it: `top` runs at load, `body` is the default export's. */
const bundle = (top: string, body: string) =>
  `${top}\nglobalThis.__hookdTransform = { default: (input) => { ${body} } };`;
const limits = { timeoutMs: 1000, memoryLimitMb: 64, maxResultBytes: 1 << 20 };
const input = JSON.stringify({ headers: {}, query: {}, path: 'x', url: '/hooks/x' });

/** A sink at every level that keeps what it is given. */
function collecting() {
  const lines: [ConsoleLevel, string][] = [];
  const dropped: number[] = [];
  const sink: ConsoleSink = {
    enabled: ['debug', 'info', 'warn', 'error'],
    write: (level, text) => lines.push([level, text]),
    dropped: (n) => dropped.push(n),
  };
  return { sink, lines, dropped };
}

const sandboxes: Sandbox[] = [];
const slots: TransformSlot[] = [];
afterEach(() => {
  for (const sandbox of sandboxes.splice(0)) sandbox.dispose();
  for (const slot of slots.splice(0)) slot.dispose();
});
async function sandboxOf(code: string, sink = collecting().sink) {
  const sandbox = await createSandbox(code, undefined, limits, sink, { offThread: true });
  sandboxes.push(sandbox);
  return sandbox;
}

const context = (payload: unknown): TransformContext => ({
  payload,
  headers: {},
  query: {},
  path: 'm',
  url: '/hooks/m',
  rawBody: JSON.stringify(payload),
});

/** The host's calls of one mapping running `code`, as `serve` makes them (on the loop, then off it). */
function hostOf(code: string, sink: ConsoleSink): HostCalls {
  const slot = createTransformSlot({
    key: 'm',
    file: 'm.ts',
    module: 'm.ts',
    root: '.',
    exportName: undefined,
    code,
    limits: { ...limits, maxInFlight: 2 },
    console: sink,
  });
  slots.push(slot);
  return { slots: new Map([['m', slot]]), timeoutMs: limits.timeoutMs };
}

describe('a transform that keeps calling console.*', () => {
  it('is stopped at its time limit: nothing crosses to the host once the budget is spent', async () => {
    const { sink, lines, dropped } = collecting();
    const calls = hostOf(bundle('', `for (;;) console.log('x');`), sink);
    const started = performance.now();
    await expect(runTransform(calls, 'm', context({}))).rejects.toMatchObject({
      code: 'TRANSFORM_FAILED',
      params: { reason: 'timed out after 1000 ms', timedOutAfterMs: 1000 },
    });
    // It ran 20-27 s against its 1000 ms. A loaded machine has 4 s for its own delays.
    expect(performance.now() - started).toBeLessThan(5000);
    expect(lines).toHaveLength(16);
    // Lines past the budget never reached the host: only the first drop was told (without the
    // budget in the isolate, every line crossed, and each was counted here).
    expect(dropped).toEqual([1]);
  });

  it('has its drops counted in the isolate and told once, when the call ends', async () => {
    const { sink, lines, dropped } = collecting();
    const sandbox = await sandboxOf(
      bundle('', `for (let i = 0; i < 1000; i++) console.log('line', i); return null;`),
      sink,
    );
    await expect(sandbox.callAsync(input, '{}', 1000)).resolves.toBe('{"ok":true,"value":null}');
    expect(lines.map(([, text]) => text)).toEqual(Array.from({ length: 16 }, (_, i) => `line ${i}`));
    expect(dropped).toEqual([984]);
  });
});

describe('the watchdog of a call off the loop', () => {
  it('ends a call that runs past its limit whatever holds it, and disposes the isolate', async () => {
    const sandbox = await sandboxOf(
      bundle('', `const end = Date.now() + input.payload.ms; while (Date.now() < end); return null;`),
    );
    // Queued behind 3 s of work in its isolate, isolated-vm's own clock has not even started.
    const started = performance.now();
    const first = sandbox.callAsync(input, '{"ms":3000}', 60_000).catch((err: unknown) => err);
    await expect(sandbox.callAsync(input, '{"ms":0}', 200)).rejects.toMatchObject({
      code: 'TRANSFORM_FAILED',
      params: { reason: 'timed out after 200 ms', timedOutAfterMs: 200 },
    });
    expect(performance.now() - started).toBeLessThan(2000);
    expect(sandbox.disposed).toBe(true);
    await first;
  });
});

describe("the built-ins hookd's code in the isolate uses", () => {
  it('are its own: a replaced String.prototype.slice leaves console lines cut at 8 KiB', async () => {
    const { sink, lines } = collecting();
    const sandbox = await sandboxOf(
      bundle(
        `String.prototype.slice = function () { return String(this); };`,
        `console.log('x'.repeat(1_000_000)); return null;`,
      ),
      sink,
    );
    await expect(sandbox.callAsync(input, '{}', 1000)).resolves.toBe('{"ok":true,"value":null}');
    expect(lines).toEqual([['info', 'x'.repeat(8192)]]);
  });

  it('are its own: a replaced slice leaves a thrown message cut at 1 KiB', async () => {
    const sandbox = await sandboxOf(
      bundle(
        `String.prototype.slice = function () { return String(this); };`,
        `throw new Error('boom ' + 'x'.repeat(10_000_000));`,
      ),
    );
    const thrown = (await sandbox.callAsync(input, '{}', 1000).catch((err: unknown) => err)) as Error;
    expect(thrown).toMatchObject({ code: 'TRANSFORM_FAILED' });
    expect(thrown.message).toMatch(/^transform failed: boom x+…$/);
    expect(thrown.message.length).toBeLessThan(1100);
  });

  it('are its own: a replaced JSON.stringify or JSON.parse does not change what crosses', async () => {
    const sandbox = await sandboxOf(
      bundle(
        `JSON.stringify = () => '{"ok":true,"value":'; JSON.parse = () => ({ payload: 'forged' });`,
        `return { kind: 'wake', text: 'got ' + input.payload.n };`,
      ),
    );
    await expect(sandbox.callAsync(input, '{"n":7}', 1000)).resolves.toBe(
      '{"ok":true,"value":{"kind":"wake","text":"got 7"}}',
    );
    expect(sandbox.callSync(input, '{"n":8}', 1000)).toBe('{"ok":true,"value":{"kind":"wake","text":"got 8"}}');
  });

  it("never ask an Object.prototype.toJSON of the transform's: a thrown error stays a failure", async () => {
    const sandbox = await sandboxOf(bundle(`Object.prototype.toJSON = () => 'fine';`, `throw new Error('it broke');`));
    await expect(sandbox.callAsync(input, '{}', 1000)).rejects.toMatchObject({
      code: 'TRANSFORM_FAILED',
      params: { reason: 'it broke' },
    });
  });
});

describe("hookd's functions in the isolate", () => {
  it('are out of reach of transform code, at load and during a call', async () => {
    const names = ['__hookdLog', '__hookdCall', '__hookdSettled', '__hookdConsoleCall', '__hookdUse'];
    const look = (of: string[]) => `${JSON.stringify(of)}.filter((name) => typeof globalThis[name] !== 'undefined')`;
    // At load, only the function the bundle's export is handed to (which can only pick the transform).
    const atLoad = look(names.filter((name) => name !== '__hookdUse'));
    const sandbox = await sandboxOf(
      bundle(
        `const atLoad = ${atLoad};`,
        `return { kind: 'wake', text: [...atLoad, ...${look(names)}].join() || 'none' };`,
      ),
    );
    await expect(sandbox.callAsync(input, '{}', 1000)).resolves.toContain('"text":"none"');
  });
});

describe('memory a transform allocates outside V8 heap (docs/transforms.md#limits)', () => {
  it('cannot be a resizable ArrayBuffer, which the memory limit does not count', async () => {
    const sandbox = await sandboxOf(
      bundle(
        '',
        `const b = new ArrayBuffer(8, { maxByteLength: 2 ** 28 });
         const text = [b.resizable, typeof b.resize, b.maxByteLength, b instanceof ArrayBuffer,
           b.constructor === ArrayBuffer, new Uint8Array(4).buffer instanceof ArrayBuffer].join();
         return { kind: 'wake', text };`,
      ),
    );
    await expect(sandbox.callAsync(input, '{}', 1000)).resolves.toContain('"text":"false,undefined,8,true,true,true"');
  });

  it('refused by the allocator, ends its isolate: the next call has a fresh one', async () => {
    // Each call keeps 16 MB more in its isolate (64 MB): once the allocator refuses, every later
    // call of that isolate would fail too. A call cut at the event loop's slice is run again in
    // the same isolate: it keeps its 16 MB once, by its number.
    const code = bundle(
      '',
      `globalThis.kept ??= new Map();
       if (!globalThis.kept.has(input.payload.n)) globalThis.kept.set(input.payload.n, new Uint8Array(16 << 20).fill(1));
       return { kind: 'wake', text: String(globalThis.kept.size) };`,
    );
    const calls = hostOf(code, collecting().sink);
    let refused: unknown;
    let n = 0;
    for (; n < 12 && refused === undefined; n++) {
      await runTransform(calls, 'm', context({ n })).catch((err: unknown) => {
        refused = err;
      });
    }
    expect(refused).toMatchObject({
      code: 'TRANSFORM_FAILED',
      params: { reason: 'exceeded its memory limit of 64 MB' },
    });
    // The refused isolate is gone: the next call fills a fresh one.
    expect(await runTransform(calls, 'm', context({ n }))).toMatchObject({ text: '1' });
  });
});
