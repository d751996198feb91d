// In-process figures for the transform sandbox: a warm call's latency for a 2 KB payload,
// and a new transform's first call (isolate, load and call; the esbuild compile apart).
import { join } from 'node:path';
import { pino } from 'pino';
import { createModelCatalog } from '../src/actions/index.js';
import { loadConfig } from '../src/config/index.js';
import { compileMappings } from '../src/mapping/index.js';
import { compileTransform, createSandbox, createTransformHost } from '../src/transforms/index.js';

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

export async function measureTransformOverhead(dir: string) {
  const payload = {
    title: 'Build failed',
    body: 'lorem ipsum dolor sit amet '.repeat(70).slice(0, 1900),
    source: 'ci',
  };
  const rawBody = JSON.stringify(payload);
  const context = {
    payload,
    headers: { 'content-type': 'application/json' },
    query: {},
    path: 'transform',
    url: '/hooks/transform',
    rawBody,
    payloadIsJsonOfRawBody: true,
  };
  const limits = { timeoutMs: 1000, memoryLimitMb: 128, maxResultBytes: 1_048_576 };

  const compileStart = performance.now();
  const compiled = await compileTransform(join(dir, 'agent.ts'), dir);
  const compileMs = performance.now() - compileStart;
  // A new transform's first call: a fresh isolate, the bundle loaded, one call. Median of 9.
  const firsts: number[] = [];
  for (let i = 0; i < 9; i++) {
    const firstStart = performance.now();
    const sandbox = await createSandbox(compiled.code, undefined, limits, {
      enabled: [],
      write: () => {},
      dropped: () => {},
    });
    sandbox.callSync(JSON.stringify({ ...context, rawBody: undefined }), rawBody, limits.timeoutMs);
    firsts.push(performance.now() - firstStart);
    sandbox.dispose();
  }
  firsts.sort((a, b) => a - b);
  const firstCallMs = percentile(firsts, 50);

  const config = loadConfig({
    data: { hooks: { transformsDir: dir, mappings: [{ id: 't', transform: { module: 'agent.ts' } }] } },
    env: {},
  });
  const mappings = compileMappings(config, createModelCatalog(config));
  const host = await createTransformHost({ config, mappings, log: pino({ level: 'silent' }) });
  for (let i = 0; i < 3000; i++) await host.run('t', context);
  const samples: number[] = [];
  for (let i = 0; i < 20_000; i++) {
    const start = performance.now();
    await host.run('t', context);
    samples.push((performance.now() - start) * 1000);
  }
  host.close();
  samples.sort((a, b) => a - b);
  return { compileMs, firstCallMs, warmP50Us: percentile(samples, 50), warmP99Us: percentile(samples, 99) };
}
