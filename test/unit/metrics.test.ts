import { Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createMetrics, type MetricSources, transformLatencyOf } from '../../src/metrics.js';
import type { BreakerView } from '../../src/views.js';

describe('transform latency from the duration histogram', () => {
  const histogram = () =>
    new Histogram({
      name: 'h_seconds',
      help: 'h',
      labelNames: ['mapping'] as const,
      buckets: [0.0001, 0.0005, 0.001, 0.1, 1],
      registers: [new Registry()],
    });

  it('has no figures before the first call', async () => {
    expect(await transformLatencyOf(histogram())).toEqual({ calls: 0, meanMs: null, p95AtMostMs: null });
  });

  it('sums every mapping: the mean, and the smallest bucket bound 95 % of calls stay within', async () => {
    const h = histogram();
    for (let i = 0; i < 10; i++) h.observe({ mapping: 'a' }, 0.0002);
    for (let i = 0; i < 9; i++) h.observe({ mapping: 'b' }, 0.0003);
    h.observe({ mapping: 'b' }, 0.05);
    const latency = await transformLatencyOf(h);
    expect(latency.calls).toBe(20);
    expect(latency.meanMs).toBeCloseTo(((10 * 0.0002 + 9 * 0.0003 + 0.05) / 20) * 1000, 9);
    expect(latency.p95AtMostMs).toBe(0.5);
  });

  it('has no bound when more than 5 % of calls are past the largest bucket', async () => {
    const h = histogram();
    h.observe({ mapping: 'a' }, 0.0002);
    h.observe({ mapping: 'a' }, 2);
    expect(await transformLatencyOf(h)).toMatchObject({ calls: 2, p95AtMostMs: null });
  });
});

describe('the gauges read at scrape time', () => {
  const lines = async (metrics: ReturnType<typeof createMetrics>, name: string) =>
    (await metrics.registry.metrics()).split('\n').filter((line) => line.startsWith(name));

  it('read nothing until the runtime is attached, then read its figures on every scrape', async () => {
    const metrics = createMetrics();
    expect(await lines(metrics, 'hookd_run_queue_depth ')).toEqual(['hookd_run_queue_depth 0']);
    expect(await lines(metrics, 'hookd_runs{')).toEqual([]);
    let depth = 3;
    let runs: Record<string, number> = { queued: 2, done: 5 };
    const sources: MetricSources = { queueDepth: () => depth, runsByStatus: async () => runs };
    metrics.attach(sources);
    expect(await lines(metrics, 'hookd_run_queue_depth ')).toEqual(['hookd_run_queue_depth 3']);
    expect(await lines(metrics, 'hookd_runs{')).toEqual([
      'hookd_runs{status="queued"} 2',
      'hookd_runs{status="done"} 5',
    ]);
    depth = 0;
    runs = { done: 7 };
    expect(await lines(metrics, 'hookd_run_queue_depth ')).toEqual(['hookd_run_queue_depth 0']);
    // A status no run has any more is gone, not left at its last count.
    expect(await lines(metrics, 'hookd_runs{')).toEqual(['hookd_runs{status="done"} 7']);
    // The embedded store has no shared clock: the skew is left at its initial 0.
    expect(await lines(metrics, 'hookd_clock_skew_seconds ')).toEqual(['hookd_clock_skew_seconds 0']);
  });

  it('answer while the store does not: its runs are left out, and hookd_store_up is 0', async () => {
    const metrics = createMetrics({ storeReadWaitMs: 100 });
    let runsByStatus: () => Promise<Record<string, number>> = async () => ({ done: 1 });
    metrics.attach({ queueDepth: () => 2, runsByStatus: () => runsByStatus() });
    expect(await lines(metrics, 'hookd_store_up ')).toEqual(['hookd_store_up 1']);
    // A database out of reach: the read fails (before, the scrape answered 500).
    runsByStatus = () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432'));
    const failed = await metrics.registry.metrics();
    expect(failed).toMatch(/^hookd_store_up 0$/m);
    expect(failed).toMatch(/^hookd_run_queue_depth 2$/m);
    expect(failed).not.toMatch(/^hookd_runs\{/m);
    // A database that answers nothing: the scrape does not wait out the query's 30 s.
    let reads = 0;
    runsByStatus = () => {
      reads++;
      return new Promise(() => undefined);
    };
    const silent = await metrics.registry.metrics();
    expect(silent).toMatch(/^hookd_store_up 0$/m);
    expect(reads).toBe(1);
    runsByStatus = async () => ({ done: 3 });
    expect(await lines(metrics, 'hookd_runs{')).toEqual(['hookd_runs{status="done"} 3']);
  });

  it('say the store is down by its ping, whatever a cached count of runs says', async () => {
    const metrics = createMetrics({ storeReadWaitMs: 100 });
    let ping: () => Promise<void> = async () => undefined;
    // The count answers from its cache (a count taken before the outage), the ping does not.
    metrics.attach({ queueDepth: () => 0, runsByStatus: async () => ({ done: 4 }), ping: () => ping() });
    expect(await lines(metrics, 'hookd_store_up ')).toEqual(['hookd_store_up 1']);
    ping = () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432'));
    expect(await lines(metrics, 'hookd_store_up ')).toEqual(['hookd_store_up 0']);
    ping = () => new Promise(() => undefined);
    expect(await lines(metrics, 'hookd_store_up ')).toEqual(['hookd_store_up 0']);
    expect(await lines(metrics, 'hookd_runs{')).toEqual(['hookd_runs{status="done"} 4']);
  });

  it('show the clock skew in seconds, and each breaker as 1 unless closed', async () => {
    const metrics = createMetrics();
    const breakers = [
      { target: 'fake/m', state: 'open' },
      { target: 'chat-1', state: 'half-open' },
      { target: 'chat-2', state: 'closed' },
    ] as BreakerView[];
    metrics.attach({
      queueDepth: () => 0,
      runsByStatus: async () => ({}),
      clockSkewMs: () => -1500,
      breakers: () => breakers,
    });
    expect(await lines(metrics, 'hookd_clock_skew_seconds ')).toEqual(['hookd_clock_skew_seconds -1.5']);
    expect(await lines(metrics, 'hookd_breaker_open{')).toEqual([
      'hookd_breaker_open{target="fake/m"} 1',
      'hookd_breaker_open{target="chat-1"} 1',
      'hookd_breaker_open{target="chat-2"} 0',
    ]);
  });
});
