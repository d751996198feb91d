import { describe, expect, it } from 'vitest';
import { createRunScheduler } from '../../../../src/runtime/runs/run-scheduler.js';

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

  it('keeps arrival order across thousands of runs, past its internal compaction and a blocked session', () => {
    const scheduler = createRunScheduler();
    const runs = Array.from({ length: 3000 }, (_, i) => ({
      id: `r${i}`,
      sessionKey: i % 1000 === 7 ? 'hook:busy' : `hook:${i}`,
    }));
    for (const run of runs) scheduler.add(run);
    const taken: string[] = [];
    for (let run = scheduler.take(); run; run = scheduler.take()) taken.push(run.id);
    // r7 took hook:busy, so r1007 and r2007 wait behind it; every other run came in order.
    expect(taken).toEqual(runs.filter((r) => r.id !== 'r1007' && r.id !== 'r2007').map((r) => r.id));
    expect(scheduler.waiting).toBe(2);
    scheduler.release({ id: 'r7', sessionKey: 'hook:busy' });
    expect(scheduler.take()?.id).toBe('r1007');
    expect(scheduler.take()).toBeUndefined();
    scheduler.release({ id: 'r1007', sessionKey: 'hook:busy' });
    expect(scheduler.take()?.id).toBe('r2007');
    expect(scheduler.waiting).toBe(0);
  });

  it('takes a waiting run out without starting it (a lease lost before it started), and only a waiting one', () => {
    const scheduler = createRunScheduler();
    const [a, b, c] = ['a', 'b', 'c'].map((id) => ({ id, sessionKey: `hook:${id}` }));
    for (const run of [a, b, c]) if (run) scheduler.add(run);
    expect(scheduler.take()).toBe(a);
    expect(scheduler.remove('a')).toBe(false);
    expect(scheduler.remove('b')).toBe(true);
    expect(scheduler.remove('b')).toBe(false);
    expect(scheduler.waiting).toBe(1);
    expect(scheduler.take()).toBe(c);
    expect(scheduler.take()).toBeUndefined();
  });
});
