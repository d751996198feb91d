import { describe, expect, it } from 'vitest';
import { createSandboxPool } from '../../../src/transforms/pool.js';
import { createSandbox, type Sandbox } from '../../../src/transforms/sandbox.js';

const bundle = (text: string) =>
  `globalThis.__hookdTransform = { default: () => ({ kind: 'wake', text: '${text}' }) };`;
const limits = { timeoutMs: 1000, memoryLimitMb: 64, maxResultBytes: 1 << 20 };
const sink = { enabled: [] as never[], write() {}, dropped() {} };

describe("a mapping's pool of sandboxes", () => {
  it('leaves no live isolate when a swap finishes after the pool was disposed', async () => {
    const built: Sandbox[] = [];
    const pool = createSandboxPool({
      key: 'm',
      code: bundle('v1'),
      build: async ({ code }) => {
        const sandbox = await createSandbox(code, undefined, limits, sink, { offThread: true });
        built.push(sandbox);
        return sandbox;
      },
      maxInFlight: 2,
      maxWaiting: 2,
      retryAfterS: 1,
    });
    pool.release(await pool.acquire(1000));
    // A reload that was compiling when the gateway closed.
    const swapping = pool.swap(bundle('v2'));
    pool.dispose();
    await swapping;
    expect(built).toHaveLength(2);
    expect(built.map((sandbox) => sandbox.disposed)).toEqual([true, true]);
    expect(pool.size).toBe(0);
  });
});
