import { describe, expect, it } from 'vitest';
import { createStore } from '../../../src/store/sqlite/index.js';

const record = (key: string, expiresAt: number) => ({
  scope: 's',
  key,
  bodyHash: 'h',
  status: 200,
  response: '{}',
  createdAt: 1000,
  expiresAt,
});

describe('idempotency records', () => {
  it('expire at expiresAt, by the time they are asked about, and purge deletes only the expired', () => {
    const store = createStore({ path: ':memory:', synchronous: 'normal' });
    const repo = store.idempotency;
    repo.put(record('k', 2000));
    repo.put(record('later', 3000));
    expect(repo.get('s', 'k', 1999)).toBeDefined();
    expect(repo.get('s', 'k', 2000)).toBeUndefined();
    expect(repo.purge(2000)).toBe(1);
    expect(repo.get('s', 'later', 2999)).toBeDefined();
    store.close();
  });
});
