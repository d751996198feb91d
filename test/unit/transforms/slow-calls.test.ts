import { describe, expect, it } from 'vitest';
import { COLD_CALLS, noteSlowCall, OFF_LOOP_FOR_MS, type SlowCallWindow } from '../../../src/transforms/slot.js';

function window() {
  const left: number[] = [];
  const state: SlowCallWindow = {
    options: { onLeaveLoop: () => left.push(performance.now()) },
    offLoopUntil: 0,
    lastSlowCall: Number.NEGATIVE_INFINITY,
  };
  return { state, left };
}
const warm = (lastCallCpuMs: number) => ({ calls: COLD_CALLS + 1, lastCallCpuMs });

describe('when a slot leaves the event loop', () => {
  it('stays on the loop after one slow call, and leaves it after a second one soon after', () => {
    const { state, left } = window();
    noteSlowCall(state, warm(6), 5);
    expect(state.offLoopUntil).toBe(0);
    expect(left).toEqual([]);
    const before = performance.now();
    noteSlowCall(state, warm(6), 5);
    expect(left).toHaveLength(1);
    expect(state.offLoopUntil).toBeGreaterThanOrEqual(before + OFF_LOOP_FOR_MS);
  });

  it('renews the stay with one slow call while off the loop, telling of the move only once', () => {
    const { state, left } = window();
    noteSlowCall(state, warm(6), 5);
    noteSlowCall(state, warm(6), 5);
    const first = state.offLoopUntil;
    state.lastSlowCall = Number.NEGATIVE_INFINITY;
    noteSlowCall(state, warm(6), 5);
    expect(state.offLoopUntil).toBeGreaterThanOrEqual(first);
    expect(left).toHaveLength(1);
  });

  it("counts neither an isolate's cold calls nor calls under the threshold", () => {
    const { state, left } = window();
    for (let i = 0; i < 3; i++) noteSlowCall(state, { calls: COLD_CALLS, lastCallCpuMs: 50 }, 5);
    for (let i = 0; i < 3; i++) noteSlowCall(state, warm(4.9), 5);
    expect(state).toMatchObject({ offLoopUntil: 0, lastSlowCall: Number.NEGATIVE_INFINITY });
    expect(left).toEqual([]);
  });
});
