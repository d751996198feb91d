import { describe, expect, it } from 'vitest';
import { createRunScheduler } from '../../../src/runtime/run-scheduler.js';

describe('createRunScheduler', () => {
  it('takes runs in arrival order, one per session key at a time', () => {
    const scheduler = createRunScheduler();
    const a1 = { id: 'a1', sessionKey: 'hook:a' };
    const a2 = { id: 'a2', sessionKey: 'hook:a' };
    const b1 = { id: 'b1', sessionKey: 'hook:b' };
    for (const run of [a1, a2, b1]) scheduler.add(run);
    expect(scheduler.take()).toBe(a1);
    expect(scheduler.take()).toBe(b1);
    expect(scheduler.take()).toBeUndefined();
    expect(scheduler.waiting).toBe(1);
    scheduler.release(a1);
    expect(scheduler.take()).toBe(a2);
    expect(scheduler.waiting).toBe(0);
  });

  it("holds a mapping's runs at its limit and lets other runs pass", () => {
    const scheduler = createRunScheduler(new Map([['github', 1]]));
    const g1 = { id: 'g1', sessionKey: 'hook:1', mappingId: 'github' };
    const g2 = { id: 'g2', sessionKey: 'hook:2', mappingId: 'github' };
    const other = { id: 'o1', sessionKey: 'hook:3', mappingId: 'stripe' };
    for (const run of [g1, g2, other]) scheduler.add(run);
    expect([scheduler.take(), scheduler.take(), scheduler.take()]).toEqual([g1, other, undefined]);
    scheduler.release(g1);
    expect(scheduler.take()).toBe(g2);
  });
});
