import { describe, expect, it } from 'vitest';
import { isHookdError } from '../../../../src/errors.js';
import { createStore, createStoreSink } from '../../../../src/store/sqlite/index.js';

const wake = {
  kind: 'wake' as const,
  text: 't',
  mode: 'now' as const,
  allowUnsafeExternalContent: false,
  contentSource: 'webhook' as const,
};

describe('createStoreSink', () => {
  it('commits requests of one event-loop turn together and answers each, even when scheduling work fails', async () => {
    const store = createStore({ path: ':memory:', synchronous: 'normal' });
    const errors: unknown[] = [];
    const sink = createStoreSink(store, {
      onCommitted: () => {
        throw new Error('scheduler broke');
      },
      onError: (err) => errors.push(err),
    });
    const answers = await Promise.all(
      [1, 2, 3].map((n) => sink.accept([{ ...wake, text: `e${n}` }], { requestId: `r${n}` })),
    );
    expect(answers.map((a) => a[0]?.kind)).toEqual(['wake', 'wake', 'wake']);
    expect(store.events.pending('main').map((e) => e.text)).toEqual(['e1', 'e2', 'e3']);
    expect(errors).toHaveLength(3);
    store.close();
  });

  it('answers 503 STORE_UNAVAILABLE with Retry-After while the disk is full, and accepts again once there is room', async () => {
    const store = createStore({ path: ':memory:', synchronous: 'normal' });
    const sink = createStoreSink(store);
    // A real SQLITE_FULL: the database may not grow past the pages it has, and a 64 KB event needs more.
    store.db.pragma(`max_page_count = ${store.db.pragma('page_count', { simple: true }) as number}`);
    const refused = await sink
      .accept([{ ...wake, text: 'x'.repeat(64 * 1024) }], { requestId: 'full' })
      .catch((e) => e);
    expect(isHookdError(refused, 'STORE_UNAVAILABLE')).toBe(true);
    expect(refused.statusCode).toBe(503);
    expect(refused.headers['retry-after']).toBe('5');
    expect(String(refused.cause?.code)).toMatch(/^SQLITE_FULL/);
    expect(store.events.pending('main')).toEqual([]);
    store.db.pragma('max_page_count = 1073741823');
    await sink.accept([{ ...wake, text: 'x'.repeat(64 * 1024) }], { requestId: 'room' });
    expect(store.events.pending('main')).toHaveLength(1);
    store.close();
  });

  it('rejects every request of a batch whose commit fails, storing none of them', async () => {
    const store = createStore({ path: ':memory:', synchronous: 'normal' });
    const sink = createStoreSink(store);
    store.db.exec("CREATE TRIGGER refuse BEFORE INSERT ON events BEGIN SELECT RAISE(ABORT, 'disk full'); END;");
    const results = await Promise.allSettled([
      sink.accept([wake], { requestId: 'a' }),
      sink.accept([wake], { requestId: 'b' }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    store.close();
  });
});
