import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createStore } from '../../../src/store/index.js';
import { makeTempDir } from '../../helpers/hookd-process.js';

let temp: ReturnType<typeof makeTempDir> | undefined;
afterEach(() => temp?.cleanup());

const modeOf = (path: string) => statSync(path).mode & 0o777;

describe('openDb', () => {
  it('creates the database, its WAL and its folder readable by their owner only', () => {
    temp = makeTempDir();
    const path = join(temp.dir, 'data', 'hookd.db');
    const store = createStore({ path, synchronous: 'normal' });
    store.meta.set('k', 1);
    expect(modeOf(path)).toBe(0o600);
    expect(modeOf(`${path}-wal`)).toBe(0o600);
    expect(modeOf(join(temp.dir, 'data'))).toBe(0o700);
    store.close();
  });

  it('makes an existing database file private', () => {
    temp = makeTempDir();
    const path = join(temp.dir, 'hookd.db');
    writeFileSync(path, '', { mode: 0o644 });
    createStore({ path, synchronous: 'normal' }).close();
    expect(modeOf(path)).toBe(0o600);
  });
});
