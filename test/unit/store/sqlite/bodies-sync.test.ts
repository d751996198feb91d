import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { openBodyLog } from '../../../../src/store/sqlite/bodies.js';
import { makeTempDir } from '../../../helpers/hookd-process.js';

/** The folders the body log made durable with fsync (every other fsync is a file's). */
const syncedFolders: string[] = [];
vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  return {
    ...fs,
    fsyncSync: (fd: number) => {
      if (fs.fstatSync(fd).isDirectory()) syncedFolders.push(fs.readlinkSync(`/proc/self/fd/${fd}`));
      fs.fsyncSync(fd);
    },
  };
});

let temp: ReturnType<typeof makeTempDir> | undefined;
afterEach(() => {
  temp?.cleanup();
  temp = undefined;
  syncedFolders.length = 0;
});

describe('the body log under storage.synchronous: full (docs/operations.md#durability)', () => {
  it("makes a new segment's name durable, and a new folder's, before the commit that counts on it", () => {
    temp = makeTempDir();
    const data = join(temp.dir, 'data');
    const folder = join(data, 'hookd.db-bodies');
    const log = openBodyLog({ folder, segmentBytes: 100, floor: 0, sync: true });
    log.append(Buffer.alloc(60, 1));
    log.flush();
    // The folder was made with the first segment (and `data` with it): each name synced in its parent.
    expect(syncedFolders).toEqual([folder, data, temp.dir]);
    syncedFolders.length = 0;
    log.append(Buffer.alloc(60, 2));
    log.flush();
    // Still within the first segment's 100 bytes when it began: no new name.
    expect(syncedFolders).toEqual([]);
    log.append(Buffer.alloc(10, 3));
    log.flush();
    // The first segment is full: a second one, its name synced in the folder.
    expect(syncedFolders).toEqual([folder]);
    expect(log.read(120, 10)).toEqual(Buffer.alloc(10, 3));
    log.close();
  });

  it('syncs no folder under storage.synchronous: normal', () => {
    temp = makeTempDir();
    const log = openBodyLog({ folder: join(temp.dir, 'bodies'), segmentBytes: 100, floor: 0 });
    log.append(Buffer.alloc(60, 1));
    log.flush();
    log.append(Buffer.alloc(60, 2));
    log.flush();
    log.append(Buffer.alloc(10, 3));
    log.flush();
    expect(syncedFolders).toEqual([]);
    log.close();
  });
});
