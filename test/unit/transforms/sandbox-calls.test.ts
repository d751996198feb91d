import { afterEach, describe, expect, it } from 'vitest';
import { createSandbox, type Sandbox } from '../../../src/transforms/sandbox.js';

// Bundles as the compiler leaves them: the module's exports on the bundle's global.
const bundle = (exports: string) => `globalThis.__hookdTransform = { ${exports} };`;
const SPIN = bundle(`default: ({ payload }) => {
  const end = Date.now() + payload.spinMs;
  while (Date.now() < end) {}
  return { kind: 'wake', text: 'spun ' + payload.spinMs };
}`);
const sink = { enabled: [] as never[], write() {}, dropped() {} };
const limits = { timeoutMs: 1000, memoryLimitMb: 64, maxResultBytes: 1 << 20 };
const input = JSON.stringify({ headers: {}, query: {}, path: 'x', url: '/hooks/x' });

const sandboxes: Sandbox[] = [];
afterEach(() => {
  for (const sandbox of sandboxes.splice(0)) sandbox.dispose();
});
async function sandboxOf(code: string, exportName?: string) {
  const sandbox = await createSandbox(code, exportName, limits, sink);
  sandboxes.push(sandbox);
  return sandbox;
}

describe('a sandbox call', () => {
  it('answers on the loop and off it, counting every call; a quick call on the loop reports 0 ms', async () => {
    const sandbox = await sandboxOf(SPIN);
    expect(sandbox.callSync(input, '{"spinMs":0}', 1000)).toBe('{"ok":true,"value":{"kind":"wake","text":"spun 0"}}');
    expect(sandbox.lastCallCpuMs).toBe(0);
    await expect(sandbox.callAsync(input, '{"spinMs":20}', 1000)).resolves.toContain('spun 20');
    // The isolate's CPU time off the loop (however little of the 20 ms a busy machine gave it).
    expect(sandbox.lastCallCpuMs).toBeGreaterThan(0);
    expect(sandbox.calls).toBe(2);
  });

  it('keeps its isolate when cut at a slice, for the rerun; a time-out that is no cut ends it', async () => {
    const sandbox = await sandboxOf(SPIN);
    expect(() => sandbox.callSync(input, '{"spinMs":200}', 5, { cut: true })).toThrow(
      expect.objectContaining({
        code: 'TRANSFORM_FAILED',
        params: { reason: 'timed out after 5 ms', timedOutAfterMs: 5 },
      }),
    );
    expect(sandbox.disposed).toBe(false);
    // Wall time of a failed call on the loop: about the slice.
    expect(sandbox.lastCallCpuMs).toBeGreaterThanOrEqual(4);
    await expect(sandbox.callAsync(input, '{"spinMs":200}', 5000)).resolves.toContain('spun 200');
    expect(() => sandbox.callSync(input, '{"spinMs":200}', 5)).toThrow(
      expect.objectContaining({ code: 'TRANSFORM_FAILED' }),
    );
    expect(sandbox.disposed).toBe(true);
  });

  it("answers an async transform's result, on the loop and off it", async () => {
    const sandbox = await sandboxOf(
      bundle(`transform: async ({ payload }) => ({ kind: 'wake', text: await Promise.resolve('n=' + payload.n) })`),
    );
    expect(sandbox.callSync(input, '{"n":1}', 1000)).toContain('"text":"n=1"');
    await expect(sandbox.callAsync(input, '{"n":2}', 1000)).resolves.toContain('"text":"n=2"');
  });

  it('throws what the transform threw as TRANSFORM_FAILED, and keeps the isolate', async () => {
    const sandbox = await sandboxOf(bundle(`default: () => { throw new TypeError('no such field'); }`));
    expect(() => sandbox.callSync(input, '{}', 1000)).toThrow(
      expect.objectContaining({
        code: 'TRANSFORM_FAILED',
        params: expect.objectContaining({ reason: 'no such field' }),
      }),
    );
    await expect(sandbox.callAsync(input, '{}', 1000)).rejects.toMatchObject({ params: { reason: 'no such field' } });
    expect(sandbox.disposed).toBe(false);
  });
});

describe('a sandbox call that fails for want of memory', () => {
  it("keeps its isolate when the transform throws the allocator's words itself: the error is its own", async () => {
    const sandbox = await sandboxOf(
      bundle(`default: () => { throw new RangeError('Array buffer allocation failed, or so it says'); }`),
    );
    const own = { reason: 'Array buffer allocation failed, or so it says' };
    expect(() => sandbox.callSync(input, '{}', 1000)).toThrow(
      expect.objectContaining({ code: 'TRANSFORM_FAILED', params: expect.objectContaining(own) }),
    );
    await expect(sandbox.callAsync(input, '{}', 1000)).rejects.toMatchObject({ params: own });
    // Rebuilt on every call, it cost an isolate's build (and its top level) each time.
    expect(sandbox.disposed).toBe(false);
  });

  it('keeps an isolate that holds little when its allocator refuses one buffer larger than the limit', async () => {
    const sandbox = await sandboxOf(
      bundle(`default: () => ({ kind: 'wake', text: String(new Uint8Array(256 << 20)[0]) })`),
    );
    // V8's RangeError, thrown where the transform asked: it may catch it, and later calls get their buffers.
    expect(() => sandbox.callSync(input, '{}', 1000)).toThrow(
      expect.objectContaining({ params: expect.objectContaining({ reason: 'Array buffer allocation failed' }) }),
    );
    expect(sandbox.disposed).toBe(false);
  });
});

describe('loading a sandbox', () => {
  it('refuses a bundle without the named export, and one that throws as it loads', async () => {
    await expect(createSandbox(SPIN, 'missing', limits, sink)).rejects.toMatchObject({
      code: 'TRANSFORM_EXPORT_MISSING',
    });
    await expect(createSandbox(`throw new Error('bad module');`, undefined, limits, sink)).rejects.toMatchObject({
      code: 'TRANSFORM_LOAD_FAILED',
      params: { reason: 'bad module' },
    });
  });
});
