import { afterEach, describe, expect, it, vi } from 'vitest';
import { createIngressPressure } from '../../../../src/runtime/runs/pressure.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('ingress pressure', () => {
  it('turns on only when requests arrived in a saturated window, and off (releasing runs) when they stop or the loop calms', () => {
    let busy = 0;
    const released: number[] = [];
    const pressure = createIngressPressure({ utilization: () => busy, onRelease: () => released.push(1) });
    busy = 1;
    pressure.tick();
    expect(pressure.high).toBe(false); // runs alone never count
    pressure.accepted();
    busy = 0.5;
    pressure.tick();
    expect(pressure.high).toBe(false); // requests on a calm loop
    pressure.accepted();
    busy = 0.95;
    pressure.tick();
    expect(pressure.high).toBe(true);
    pressure.accepted();
    busy = 0.8;
    pressure.tick();
    expect(pressure.high).toBe(true); // between the thresholds: unchanged
    pressure.accepted();
    busy = 0.6;
    pressure.tick();
    expect(pressure.high).toBe(false);
    expect(released).toHaveLength(1);
    pressure.accepted();
    busy = 1;
    pressure.tick();
    expect(pressure.high).toBe(true);
    pressure.tick(); // a window without requests
    expect(pressure.high).toBe(false);
    expect(released).toHaveLength(2);
  });

  it('samples every intervalMs once started, and no more once stopped', () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    let samples = 0;
    const pressure = createIngressPressure({
      intervalMs: 100,
      utilization: () => {
        samples++;
        return 1;
      },
    });
    pressure.start();
    pressure.accepted();
    vi.advanceTimersByTime(99);
    expect(samples).toBe(0);
    expect(pressure.high).toBe(false);
    vi.advanceTimersByTime(1);
    expect(samples).toBe(1);
    expect(pressure.high).toBe(true);
    vi.advanceTimersByTime(200);
    expect(samples).toBe(3);
    pressure.stop();
    vi.advanceTimersByTime(1000);
    expect(samples).toBe(3);
  });
});
