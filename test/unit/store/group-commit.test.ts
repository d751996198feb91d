import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createCommitQueue, createGroupCommit, LINGER } from '../../../src/store/group-commit.js';
import { createStore } from '../../../src/store/sqlite/index.js';

const nextTurn = () => new Promise((done) => setImmediate(done));

/** A group commit over a recording transaction: each commit's writes' results, in order. */
function recordingGroup() {
  const commits: unknown[][] = [];
  const group = createGroupCommit(<T>(fn: () => T): T => {
    const result = fn();
    commits.push(result as unknown[]);
    return result;
  }, {});
  return { group, commits };
}

const event = (id: string, text = 'x') => ({
  id,
  sessionKey: 'main',
  text,
  origin: 'hook' as const,
  allowUnsafeExternalContent: false,
  contentSource: 'webhook' as const,
  createdAt: 1,
});

describe('group commit', () => {
  it('runs the writes of one event-loop turn in one transaction and settles each after it', async () => {
    const transactions: number[] = [];
    let inside = 0;
    const group = createGroupCommit(<T>(fn: () => T): T => {
      transactions.push(0);
      inside++;
      try {
        return fn();
      } finally {
        inside--;
      }
    }, {});
    const results = await Promise.all([1, 2, 3].map((n) => group.write(() => (inside === 1 ? n * 10 : -1))));
    expect(results).toEqual([10, 20, 30]);
    expect(transactions).toHaveLength(1);
    await group.write(() => 0);
    expect(transactions).toHaveLength(2);
  });

  it('lets lingering writes of several turns share one commit', async () => {
    const { group, commits } = recordingGroup();
    const written: Promise<unknown>[] = [];
    for (const n of [1, 2, 3]) {
      written.push(group.write(() => n, LINGER));
      await nextTurn();
    }
    expect(commits).toEqual([]);
    expect(await Promise.all(written)).toEqual([1, 2, 3]);
    expect(commits).toEqual([[1, 2, 3]]);
  });

  it('commits lingering writes with the next write that may not wait, in their order', async () => {
    const { group, commits } = recordingGroup();
    const lingering = group.write(() => 'running', LINGER);
    await nextTurn();
    const urgent = group.write(() => 'accepted');
    await nextTurn();
    expect(commits).toEqual([['running', 'accepted']]);
    expect(await Promise.all([lingering, urgent])).toEqual(['running', 'accepted']);
  });

  it('flushes what lingers at once, and nothing when nothing is queued', async () => {
    const { group, commits } = recordingGroup();
    await group.flush();
    expect(commits).toEqual([]);
    const lingering = group.write(() => 'wait', LINGER);
    const flushed = group.flush();
    // A synchronous commit starts within the call.
    expect(commits).toEqual([['wait']]);
    await flushed;
    expect(await lingering).toBe('wait');
  });

  it('commits lingering writes when the store closes', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hookd-linger-'));
    try {
      const path = join(dir, 'hookd.db');
      const store = createStore({ path, synchronous: 'normal' });
      void store.group.write((w) => w.events.insert(event('lingered')), LINGER);
      store.close();
      const reopened = createStore({ path, synchronous: 'normal' });
      expect(reopened.events.list('main', 100).map((e) => e.id)).toEqual(['lingered']);
      reopened.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('fails only the write that failed: the rest of its batch is committed', async () => {
    const store = createStore({ path: ':memory:', synchronous: 'normal' });
    store.db.exec(
      "CREATE TRIGGER refuse BEFORE INSERT ON events WHEN NEW.text = 'bad' BEGIN SELECT RAISE(ABORT, 'refused'); END;",
    );
    const results = await Promise.allSettled([
      store.group.write(() => store.events.insert(event('a'))),
      store.group.write(() => store.events.insert(event('b', 'bad'))),
      store.group.write(() => store.events.insert(event('c'))),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(store.events.list('main', 100).map((e) => e.id)).toEqual(['a', 'c']);
    store.close();
  });
});

describe('the commit queue both stores commit through', () => {
  it('never starts a second commit beside the one in flight when flushed, and keeps the order', async () => {
    const batches: string[][] = [];
    let inFlight = 0;
    let most = 0;
    let release!: () => void;
    const queue = createCommitQueue<string, string>({
      commit: async (items) => {
        batches.push([...items]);
        most = Math.max(most, ++inFlight);
        if (batches.length === 1) await new Promise<void>((done) => (release = done));
        inFlight--;
        return items;
      },
    });
    const first = queue.add('accept');
    await nextTurn();
    const second = queue.add('running', true);
    const flushed = queue.flush();
    expect(batches).toEqual([['accept']]);
    release();
    await flushed;
    expect(await Promise.all([first, second])).toEqual(['accept', 'running']);
    expect(batches).toEqual([['accept'], ['running']]);
    expect(most).toBe(1);
  });

  it('keeps at most `concurrency` commits in flight, and batches what arrives meanwhile', async () => {
    const batches: number[][] = [];
    let inFlight = 0;
    let most = 0;
    const releases: (() => void)[] = [];
    const queue = createCommitQueue<number, number>({
      concurrency: 2,
      commit: async (items) => {
        batches.push([...items]);
        most = Math.max(most, ++inFlight);
        await new Promise<void>((resolve) => releases.push(resolve));
        inFlight--;
        return items.map((n) => n * 2);
      },
    });
    const first = queue.add(1);
    await expect.poll(() => batches.length).toBe(1);
    const second = queue.add(2);
    await expect.poll(() => batches.length).toBe(2);
    // Two in flight: these wait together for the next free commit.
    const rest = [queue.add(3), queue.add(4)];
    await new Promise((resolve) => setImmediate(resolve));
    expect(batches).toHaveLength(2);
    releases.shift()?.();
    await expect(first).resolves.toBe(2);
    await expect.poll(() => batches.length).toBe(3);
    expect(batches[2]).toEqual([3, 4]);
    for (const release of releases.splice(0)) release();
    await expect(second).resolves.toBe(4);
    releases.shift()?.();
    await expect(Promise.all(rest)).resolves.toEqual([6, 8]);
    expect(most).toBe(2);
  });

  it('after a rollback commits each item alone, so that only the bad one fails', async () => {
    const commits: number[][] = [];
    const queue = createCommitQueue<number, number>({
      commit: (items) => {
        commits.push([...items]);
        if (items.includes(13)) throw new Error('rolled back');
        return items;
      },
    });
    const results = await Promise.allSettled([queue.add(1), queue.add(13), queue.add(2)]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(commits).toEqual([[1, 13, 2], [1], [13], [2]]);
  });

  it('fails a whole batch at once when the store is not there, not each write after its own time-out', async () => {
    // Before: 25 accepts to a PostgreSQL out of reach made 26 commits one after another (each up
    // to 5 s against a real server), the last sender answered minutes later.
    const commits: number[][] = [];
    const queue = createCommitQueue<number, number>({
      commit: async (items) => {
        commits.push([...items]);
        throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
      },
    });
    const results = await Promise.allSettled(Array.from({ length: 25 }, (_, n) => queue.add(n)));
    expect(results.every((r) => r.status === 'rejected')).toBe(true);
    expect(commits).toHaveLength(1);
  });
});
