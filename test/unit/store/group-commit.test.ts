import { describe, expect, it } from 'vitest';
import { createGroupCommit } from '../../../src/store/group-commit.js';
import { createStore } from '../../../src/store/sqlite/index.js';

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
    expect(store.events.list('main').map((e) => e.id)).toEqual(['a', 'c']);
    store.close();
  });
});
