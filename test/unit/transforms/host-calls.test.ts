import { afterEach, describe, expect, it } from 'vitest';
import { parseBody } from '../../../src/ingress/body.js';
import type { TransformContext } from '../../../src/mapping/index.js';
import { type HostCalls, runTransform } from '../../../src/transforms/host.js';
import { createTransformSlot, type TransformSlot } from '../../../src/transforms/slot.js';

// Bundles as the compiler leaves them: the module's exports on the bundle's global.
const bundle = (exports: string) => `globalThis.__hookdTransform = { ${exports} };`;
const ECHO = bundle(`default: ({ payload }) => ({ kind: 'wake', text: 'n=' + payload.n })`);
const SPIN = bundle(`default: () => { for (;;) {} }`);
const TIMEOUT_MS = 1000;

const slots: TransformSlot[] = [];
afterEach(() => {
  for (const slot of slots.splice(0)) slot.dispose();
});

function hostOf(code: string, exportName?: string, observe?: HostCalls['observe']): HostCalls {
  const slot = createTransformSlot({
    key: 'm',
    file: 'm.ts',
    module: 'm.ts',
    root: '.',
    exportName,
    code,
    limits: { timeoutMs: TIMEOUT_MS, memoryLimitMb: 64, maxResultBytes: 1 << 20, maxInFlight: 2 },
    console: { enabled: [], write() {}, dropped() {} },
  });
  slots.push(slot);
  return { slots: new Map([['m', slot]]), timeoutMs: TIMEOUT_MS, observe };
}

const context = (payload: unknown, rawBody: string, extra: Partial<TransformContext> = {}): TransformContext => ({
  payload,
  headers: {},
  query: {},
  path: 'm',
  url: '/hooks/m',
  rawBody,
  ...extra,
});

describe("a host's transform call", () => {
  it("answers the result's value and tells how long the call took", async () => {
    const seen: [string, number][] = [];
    const calls = hostOf(ECHO, undefined, (key, seconds) => seen.push([key, seconds]));
    await expect(runTransform(calls, 'm', context({ n: 1 }, '{"n":1}'))).resolves.toEqual({
      kind: 'wake',
      text: 'n=1',
    });
    expect(seen).toHaveLength(1);
    expect(seen[0]?.[0]).toBe('m');
    expect(seen[0]?.[1]).toBeGreaterThan(0);
  });

  it('sends the payload unless it is the raw body as JSON, which the sandbox parses itself', async () => {
    const calls = hostOf(ECHO);
    // A fan-out's item is not the body: it is sent.
    await expect(runTransform(calls, 'm', context({ n: 'item' }, '{"n":"body"}'))).resolves.toMatchObject({
      text: 'n=item',
    });
    const whole = context({ n: 'body' }, '{"n":"body"}', { payloadIsJsonOfRawBody: true });
    await expect(runTransform(calls, 'm', whole)).resolves.toMatchObject({ text: 'n=body' });
  });

  // The body's parser removes `__proto__` and `constructor.prototype` keys; a sandbox that parsed
  // the raw body again got them back, and a naive merge in an honest transform then polluted its
  // isolate's prototypes for every later sender (`{"__proto__":{"mute":true}}` muted them all).
  it.each([
    ['__proto__', '{"title":"x","__proto__":{"mute":true}}'],
    ['constructor.prototype', '{"title":"x","constructor":{"prototype":{"mute":true}}}'],
    ['an escaped __proto__', '{"title":"x","\\u005f_proto__":{"mute":true}}'],
  ])('gives the transform the payload the parser cleaned, never the raw body again: %s', async (_, text) => {
    const parsed = parseBody('json', Buffer.from(text));
    if (!parsed.ok) throw new Error('refused');
    const merge = bundle(`default: ({ payload }) => {
      const merge = (into, from) => { for (const k of Object.keys(from)) into[k] = typeof from[k] === 'object' ? merge(into[k] ?? {}, from[k]) : from[k]; return into; };
      merge({}, payload);
      return { kind: 'wake', text: 'keys=' + Object.keys(payload).join(',') + ' muted=' + String(({}).mute) };
    }`);
    const { payload, rawBody, payloadIsJsonOfRawBody } = parsed.body;
    const result = runTransform(hostOf(merge), 'm', context(payload, rawBody.toString(), { payloadIsJsonOfRawBody }));
    await expect(result).resolves.toMatchObject({ text: 'keys=title muted=undefined' });
  });

  it("runs within the request's budget when it is less than the time limit", async () => {
    const calls = hostOf(SPIN);
    await expect(runTransform(calls, 'm', context({}, '{}'), 40.2)).rejects.toMatchObject({
      code: 'TRANSFORM_FAILED',
      params: { reason: 'timed out after 41 ms', timedOutAfterMs: 41 },
    });
  });

  it('answers a module that fails to load, or lacks its export, as TRANSFORM_FAILED', async () => {
    await expect(
      runTransform(hostOf(`throw new Error('broken at load');`), 'm', context({}, '{}')),
    ).rejects.toMatchObject({
      code: 'TRANSFORM_FAILED',
      params: { reason: 'failed while loading: broken at load' },
    });
    const missing = runTransform(hostOf(ECHO, 'nope'), 'm', context({}, '{}'));
    await expect(missing).rejects.toMatchObject({
      code: 'TRANSFORM_FAILED',
      params: { reason: expect.stringContaining('nope') },
    });
  });

  it('fails a mapping that has no transform loaded', async () => {
    await expect(runTransform(hostOf(ECHO), 'other', context({}, '{}'))).rejects.toMatchObject({
      code: 'TRANSFORM_FAILED',
      params: { reason: 'no transform is loaded for other' },
    });
  });
});
