import { constants, PerformanceObserver, performance } from 'node:perf_hooks';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createMemorySettler } from '../../src/settle.js';

const MB = 1024 * 1024;

/** A settler over a scripted loop, run queue and heap; `collect` halves what is above 50 MB. */
function scripted() {
  const state = { utilization: 0, idle: true, heap: 50 * MB, collections: 0 };
  const settler = createMemorySettler({
    log: pino({ level: 'silent' }),
    idle: () => state.idle,
    utilization: () => state.utilization,
    heapBytes: () => state.heap,
    collect: () => {
      state.collections++;
      state.heap = 50 * MB + (state.heap - 50 * MB) / 2;
    },
  });
  return { state, settler };
}

describe('memory settler', () => {
  it('collects once the gateway is quiet after a burst, at most three times, and not again until the next burst', () => {
    const { state, settler } = scripted();
    settler.tick();
    // A burst: the loop busy and the heap grown; nothing is collected while busy.
    state.utilization = 0.9;
    state.heap = 150 * MB;
    settler.tick();
    settler.tick();
    expect(state.collections).toBe(0);
    // Quiet, but runs still queued: not yet.
    state.utilization = 0.01;
    state.idle = false;
    settler.tick();
    expect(state.collections).toBe(0);
    state.idle = true;
    for (let i = 0; i < 6; i++) settler.tick();
    expect(state.collections).toBe(3);
    expect(state.heap).toBe(62.5 * MB);
    // The next burst allows collections again.
    state.utilization = 0.5;
    state.heap = 150 * MB;
    settler.tick();
    state.utilization = 0;
    settler.tick();
    expect(state.collections).toBe(4);
  });

  it('leaves a heap within the slack of the smallest seen alone, and a quiet gateway that never was busy', () => {
    const { state, settler } = scripted();
    state.heap = 60 * MB;
    for (let i = 0; i < 5; i++) settler.tick();
    expect(state.collections).toBe(0);
    state.utilization = 0.9;
    settler.tick();
    state.utilization = 0;
    state.heap = 65 * MB;
    settler.tick();
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
});
