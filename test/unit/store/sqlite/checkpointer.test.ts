import { closeSync, existsSync, mkdtempSync, openSync, readSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createStore, startCheckpointer } from '../../../../src/store/sqlite/index.js';

/**
 * The WAL's first salt: SQLite adds one to it each time it starts the WAL over (the header is
 * written again with the first frame after); undefined while the file has no header.
 */
function walSalt(path: string): number | undefined {
  const fd = openSync(path, 'r');
  try {
    const header = Buffer.alloc(32);
    return readSync(fd, header, 0, 32, 0) === 32 ? header.readUInt32BE(16) : undefined;
  } finally {
    closeSync(fd);
  }
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

describe('background checkpointer', () => {
  it('copies committed pages into the database file while the writer never checkpoints, and stops', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hookd-ckpt-'));
    const path = join(dir, 'hookd.db');
    const store = createStore({ path, synchronous: 'normal', autocheckpointPages: 1_000_000 });
    const errors: string[] = [];
    const checkpointer = startCheckpointer({ path, everyMs: 20, onError: (m) => errors.push(m) });
    const before = statSync(path).size;
    store.transaction(() => {
      for (let i = 0; i < 500; i++) store.events.insert(event(`e${i}`, 'y'.repeat(2000)));
    });
    expect(statSync(`${path}-wal`).size).toBeGreaterThan(1_000_000);
    await expect.poll(() => statSync(path).size, { timeout: 5000 }).toBeGreaterThan(before + 1_000_000);
    await checkpointer.stop();
    expect(errors).toEqual([]);
    store.close();
    // The writer's own close, as the last connection, folds the WAL away.
    expect(existsSync(`${path}-wal`)).toBe(false);
    rmSync(dir, { recursive: true, force: true });
  });

  it('starts the WAL over under steady writes, so that it stays small', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hookd-ckpt-'));
    const path = join(dir, 'hookd.db');
    const store = createStore({ path, synchronous: 'normal', autocheckpointPages: 1_000_000 });
    const errors: string[] = [];
    const checkpointer = startCheckpointer({
      path,
      everyMs: 10,
      restartPages: 256,
      writer: store.db,
      onError: (m) => errors.push(m),
    });
    // About 20 MB in 1,000 commits, one a millisecond: without a restart the WAL file grew to
    // 44–49 MB; restarted from 256 pages (1 MB) on, it stayed at 1.6–2.3 MB on a quiet machine,
    // 21 MB beside a second test suite, whose load starves the checkpoint thread. So the
    // restarts are counted, as the WAL's header tells them, and its size is held under what no
    // restart at all makes.
    let largest = 0;
    let restarts = 0;
    let salt: number | undefined;
    for (let c = 0; c < 1000; c++) {
      store.transaction(() => {
        for (let i = 0; i < 10; i++) store.events.insert(event(`e${c}-${i}`, 'y'.repeat(2000)));
      });
      largest = Math.max(largest, statSync(`${path}-wal`).size);
      const now = walSalt(`${path}-wal`);
      if (salt !== undefined && now !== undefined && now !== salt) restarts++;
      salt = now ?? salt;
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    await checkpointer.stop();
    store.close();
    rmSync(dir, { recursive: true, force: true });
    expect(errors).toEqual([]);
    expect(restarts).toBeGreaterThanOrEqual(3);
    expect(largest).toBeLessThan(32_000_000);
    process.stdout.write(`WAL: ${restarts} restarts, at most ${(largest / 1e6).toFixed(1)} MB\n`);
  });
});
