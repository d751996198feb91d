import { describe, expect, it } from 'vitest';
import { createDoubts, type DoubtsResolved } from '../../../../src/store/postgres/sink-doubts.js';

/** The accepts answered 503 COMMIT_UNCONFIRMED, told once the database says what became of them. */

const wake = (eventId: string) => [{ kind: 'wake' as const, eventId, mode: 'now' as const }];
const agent = (runId: string) => [{ kind: 'agent' as const, runId, sessionKey: `hook:${runId}` }];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function setup(there: Set<string>, options: { failFirst?: boolean } = {}) {
  const told: DoubtsResolved[] = [];
  const asked: string[][] = [];
  let fail = options.failFirst ?? false;
  const doubts = createDoubts({
    find: async (ids) => {
      asked.push([...ids]);
      if (fail) {
        fail = false;
        throw new Error('connect ECONNREFUSED');
      }
      return new Set(ids.filter((id) => there.has(id)));
    },
    report: (resolved) => told.push(resolved),
    settleMs: 100,
  });
  return { doubts, told, asked };
}

describe('accepts in doubt', () => {
  it('are told committed as soon as a commit works and their row is there; the rest only once they can no longer commit', async () => {
    const there = new Set(['e1']);
    const { doubts, told } = setup(there);
    doubts.add('r1', wake('e1'));
    doubts.add('r2', agent('run-2'));
    doubts.add('r0', []);
    expect(told).toEqual([]);
    doubts.committed();
    await expect.poll(() => told).toEqual([{ committed: ['r1'], notCommitted: [], untold: 0 }]);
    // A statement still running on the server commits after the first look.
    there.add('run-2');
    doubts.committed();
    await expect.poll(() => told.length).toBe(2);
    expect(told[1]).toEqual({ committed: ['r2'], notCommitted: [], untold: 0 });
    doubts.stop();
  });

  it('are told not committed after the settling time, and looked for again after a failed look', async () => {
    const { doubts, told, asked } = setup(new Set(), { failFirst: true });
    doubts.add('r3', wake('e3'));
    doubts.committed();
    await sleep(150);
    // The first look failed; the final one told it.
    expect(asked).toEqual([['e3'], ['e3']]);
    expect(told).toEqual([{ committed: [], notCommitted: ['r3'], untold: 0 }]);
    doubts.committed();
    await sleep(150);
    expect(asked).toHaveLength(2);
    doubts.stop();
  });

  it('judges each not committed only settleMs after its own doubt, not on the timer of an earlier one', async () => {
    const { doubts, told } = setup(new Set());
    const started = performance.now();
    doubts.add('early', wake('e-early'));
    doubts.committed();
    await sleep(80);
    // Fell in doubt just before the first final look: a statement of its can still commit.
    doubts.add('late', wake('e-late'));
    await expect.poll(() => told.length).toBe(1);
    expect(told[0]).toEqual({ committed: [], notCommitted: ['early'], untold: 0 });
    await expect.poll(() => told.length).toBe(2);
    expect(told[1]).toEqual({ committed: [], notCommitted: ['late'], untold: 0 });
    expect(performance.now() - started).toBeGreaterThanOrEqual(175);
    doubts.stop();
  });

  it('keeps 1,000 at most, and counts the rest', async () => {
    const { doubts, told } = setup(new Set());
    for (let i = 0; i < 1005; i++) doubts.add(`r${i}`, wake(`e${i}`));
    doubts.committed();
    // Added over more than settleMs on a loaded machine, they may be told in two parts.
    const notCommitted = () => told.reduce((n, r) => n + r.notCommitted.length, 0);
    await expect.poll(notCommitted, { timeout: 2000 }).toBe(1000);
    expect(told.reduce((n, r) => n + r.untold, 0)).toBe(5);
    doubts.stop();
  });
});
