import { resolve } from 'node:path';
import { constants, PerformanceObserver, performance } from 'node:perf_hooks';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createMemorySettler } from '../../src/settle.js';
import { runScript } from '../helpers/script.js';

const MB = 1024 * 1024;

/** A settler over a scripted loop, run queue, heap and clock; `collect` halves what is above 50 MB. */
function scripted() {
  const state = { utilization: 0, idle: true, heap: 50 * MB, collections: 0, now: 0 };
  const settler = createMemorySettler({
    log: pino({ level: 'silent' }),
    idle: () => state.idle,
    utilization: () => state.utilization,
    heapBytes: () => state.heap,
    now: () => state.now,
    collect: () => {
      state.collections++;
      state.heap = 50 * MB + (state.heap - 50 * MB) / 2;
    },
  });
  /** One check a second later. */
  const tick = () => {
    state.now += 1000;
    settler.tick();
  };
  /** A busy second that grows the heap to `heapMb`; the loop is quiet again after it. */
  const burst = (heapMb: number) => {
    state.utilization = 0.9;
    state.heap = heapMb * MB;
    tick();
    state.utilization = 0;
  };
  return { state, settler, tick, burst };
}

describe('memory settler', () => {
  it('collects once the gateway is quiet after a burst, then twice more 5.5 s apart, and not again until the next burst', () => {
    const { state, tick, burst } = scripted();
    tick();
    // A burst: the loop busy and the heap grown; nothing is collected while busy.
    state.utilization = 0.9;
    state.heap = 150 * MB;
    tick();
    tick();
    expect(state.collections).toBe(0);
    // Quiet, but runs still queued: not yet.
    state.utilization = 0.01;
    state.idle = false;
    tick();
    expect(state.collections).toBe(0);
    state.idle = true;
    tick();
    expect(state.collections).toBe(1);
    // V8 gives the young generation back only in a collection whose last 5 s were quiet.
    for (let i = 0; i < 5; i++) tick();
    expect(state.collections).toBe(1);
    tick();
    expect(state.collections).toBe(2);
    for (let i = 0; i < 20; i++) tick();
    expect(state.collections).toBe(3);
    expect(state.heap).toBe(62.5 * MB);
    // The next burst allows collections again.
    burst(150);
    tick();
    expect(state.collections).toBe(4);
  });

  it('stops collecting once the heap is back within the slack, and starts over when the loop gets busy in between', () => {
    const { state, tick, burst } = scripted();
    burst(90);
    tick();
    expect(state.collections).toBe(1);
    // Busy again before the follow-up: the next quiet tick collects at once.
    burst(100);
    tick();
    expect(state.collections).toBe(2);
    // 100 → 75 → 62.5 MB: within 16 MB of the smallest heap (50 MB) after the third.
    for (let i = 0; i < 30; i++) tick();
    expect(state.collections).toBe(3);
    expect(state.heap).toBe(62.5 * MB);
  });

  it('checks a due follow-up on time, not at the next whole interval', async () => {
    let heap = 30 * MB;
    let utilization = 0.9;
    const collected: number[] = [];
    const settler = createMemorySettler({
      log: pino({ level: 'silent' }),
      idle: () => true,
      utilization: () => utilization,
      heapBytes: () => heap,
      collect: () => {
        collected.push(performance.now());
        heap -= 40 * MB;
      },
      intervalMs: 1000,
      spacingMs: 250,
    });
    heap = 150 * MB;
    settler.tick();
    utilization = 0;
    settler.start();
    try {
      await expect.poll(() => collected.length, { timeout: 4000 }).toBe(2);
      // 250 ms after the first, where waiting for the next check would have taken 1 s.
      const gap = (collected[1] as number) - (collected[0] as number);
      expect(gap).toBeGreaterThanOrEqual(250);
      expect(gap).toBeLessThan(900);
    } finally {
      settler.stop();
    }
  });

  it('leaves a heap within the slack of the smallest seen alone, and a quiet gateway that never was busy', () => {
    const { state, tick } = scripted();
    state.heap = 60 * MB;
    for (let i = 0; i < 5; i++) tick();
    expect(state.collections).toBe(0);
    state.utilization = 0.9;
    tick();
    state.utilization = 0;
    state.heap = 65 * MB;
    tick();
    expect(state.collections).toBe(0);
  });

  it("runs V8's full collection without a flag on the command line, and keeps gc out of the global scope", async () => {
    const majors: number[] = [];
    const observer = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) {
        if ((entry as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) {
          majors.push(entry.startTime);
        }
      }
    });
    observer.observe({ entryTypes: ['gc'] });
    try {
      let utilization = 0.9;
      let heap = 10 * MB;
      const settler = createMemorySettler({
        log: pino({ level: 'silent' }),
        idle: () => true,
        utilization: () => utilization,
        heapBytes: () => heap,
      });
      settler.tick();
      heap = 100 * MB;
      utilization = 0;
      const before = performance.now();
      settler.tick();
      await expect.poll(() => majors.filter((at) => at >= before).length).toBeGreaterThan(0);
      expect('gc' in globalThis).toBe(false);
    } finally {
      observer.disconnect();
    }
  });

  it("gets V8 to give a burst's young generation back within 7 s of the loop going quiet", async () => {
    // In its own process, on V8's real heap: a 1.5 s burst grows the heap to 60–110 MB. The
    // first collection leaves about 40 MB (V8 keeps the young generation while the last 5 s
    // still hold the burst); the follow-up 5.5 s later brings it under 20 MB. Collections 2 s
    // apart (the settler before) left 40 MB for good in some runs and not in others; the
    // scripted tests above pin the schedule.
    const script = `
      import { pino } from ${JSON.stringify(resolve('node_modules/pino/pino.js'))};
      import { createMemorySettler } from ${JSON.stringify(resolve('src/settle.ts'))};
      const settler = createMemorySettler({ log: pino({ level: 'silent' }), idle: () => true });
      settler.start();
      const until = Date.now() + 1500;
      let keep = [];
      while (Date.now() < until) {
        for (let i = 0; i < 2000; i++) keep.push(JSON.parse(JSON.stringify({ m: 'y'.repeat(300), i })));
        if (keep.length > 60000) keep = keep.slice(30000);
      }
      keep = null;
      const burstMb = process.memoryUsage().heapTotal / 1048576;
      const quietAt = Date.now();
      const timer = setInterval(() => {
        const heapMb = process.memoryUsage().heapTotal / 1048576;
        const afterMs = Date.now() - quietAt;
        if (heapMb < 20 || afterMs > 10000) {
          clearInterval(timer);
          settler.stop();
          process.stdout.write(JSON.stringify({ burstMb, heapMb, afterMs }));
        }
      }, 250);
    `;
    const stdout = await runScript(script);
    const { burstMb, heapMb, afterMs } = JSON.parse(stdout) as { burstMb: number; heapMb: number; afterMs: number };
    expect(burstMb).toBeGreaterThan(40);
    expect(heapMb).toBeLessThan(20);
    expect(afterMs).toBeLessThan(9000);
  }, 20_000);
});
