import { existsSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openBodyLog } from '../../../../src/store/sqlite/bodies.js';
import { createStore, type Store } from '../../../../src/store/sqlite/index.js';
import { bodyMatcher } from '../../../../src/store/sqlite/search.js';
import { makeTempDir } from '../../../helpers/hookd-process.js';
import { logRecord } from '../../../helpers/log-record.js';

/** The request log's bodies beside the SQLite file (src/store/sqlite/bodies.ts). */

let temp: ReturnType<typeof makeTempDir> | undefined;
const stores: Store[] = [];
afterEach(() => {
  for (const store of stores.splice(0)) store.close();
  temp?.cleanup();
  temp = undefined;
});

const record = (id: string, body: string | Buffer) => logRecord(id, body);

function fileStore(bodySegmentBytes = 1024 * 1024) {
  temp ??= makeTempDir();
  const path = join(temp.dir, 'hookd.db');
  const store = createStore({ path, synchronous: 'normal', bodySegmentBytes });
  stores.push(store);
  return { store, path, folder: `${path}-bodies` };
}

describe('the body log', () => {
  it('keeps a body out of the database, written once before its commit, and reads it back after a restart', () => {
    const { store, path, folder } = fileStore();
    store.transaction(() => {
      store.requests.insert(record('a', '{"n":1}'));
      store.requests.insert(record('b', 'second body'));
      // Read back before the commit, from what is waiting to be written.
      expect(store.requests.get('b')?.body.toString()).toBe('second body');
      expect(existsSync(folder)).toBe(false);
    });
    expect(readdirSync(folder)).toHaveLength(1);
    const row = store.db.prepare('SELECT body, body_at, body_len FROM requests WHERE id = ?').get('b');
    expect(row).toEqual({ body: Buffer.alloc(0), body_at: 7, body_len: 11 });
    store.close();
    stores.pop();
    const reopened = createStore({ path, synchronous: 'normal' });
    stores.push(reopened);
    expect(reopened.requests.get('a')?.body.toString()).toBe('{"n":1}');
    expect(reopened.requests.get('b')?.body.toString()).toBe('second body');
    reopened.requests.insert(record('c', 'after the restart'));
    expect(reopened.requests.get('c')?.body.toString()).toBe('after the restart');
  });

  it('writes nothing of a transaction that rolled back, and never hands out a position a row refers to twice', () => {
    const { store, path, folder } = fileStore();
    expect(() =>
      store.transaction(() => {
        store.requests.insert(record('gone', 'rolled back'));
        throw new Error('rollback');
      }),
    ).toThrow('rollback');
    store.requests.insert(record('kept', 'committed'));
    expect(store.db.prepare('SELECT body_at FROM requests').all()).toEqual([{ body_at: 0 }]);
    store.close();
    stores.pop();
    // The folder lost (a database restored without it): new bodies go past what rows refer to.
    rmSync(folder, { recursive: true });
    const restored = createStore({ path, synchronous: 'normal' });
    stores.push(restored);
    expect(restored.requests.get('kept')?.body).toEqual(Buffer.alloc(0));
    restored.requests.insert(record('new', 'a new body'));
    expect(restored.db.prepare("SELECT body_at FROM requests WHERE id = 'new'").get()).toEqual({ body_at: 9 });
    expect(restored.requests.get('new')?.body.toString()).toBe('a new body');
    expect(restored.requests.get('kept')?.body).toEqual(Buffer.alloc(0));
  });

  it('starts a new segment past its size and deletes the segments no body is read from', () => {
    temp = makeTempDir();
    const folder = join(temp.dir, 'bodies');
    const log = openBodyLog({ folder, segmentBytes: 100, floor: 0 });
    const positions: number[] = [];
    for (let commit = 0; commit < 5; commit++) {
      positions.push(log.append(Buffer.alloc(60, commit)), log.append(Buffer.alloc(60, commit + 10)));
      log.flush();
    }
    expect(readdirSync(folder)).toHaveLength(5);
    expect(log.bytes()).toBe(600);
    expect(log.read(positions[3] as number, 60)).toEqual(Buffer.alloc(60, 11));
    expect(log.releaseBefore(positions[5] as number)).toBe(240);
    expect(readdirSync(folder)).toHaveLength(3);
    expect(log.read(positions[5] as number, 60)).toEqual(Buffer.alloc(60, 12));
    expect(log.read(positions[0] as number, 60)).toEqual(Buffer.alloc(0));
    // Nothing read any more: every segment goes, and positions go on where they were.
    expect(log.releaseBefore(Number.POSITIVE_INFINITY)).toBe(360);
    expect(readdirSync(folder)).toEqual([]);
    expect(log.append(Buffer.from('next'))).toBe(600);
    log.flush();
    expect(log.read(600, 4).toString()).toBe('next');
    log.close();
  });

  it('holds at most 16 segment files open, however many it reads, and reopens one read again', () => {
    temp = makeTempDir();
    const folder = join(temp.dir, 'bodies');
    const openHere = () =>
      readdirSync('/proc/self/fd').filter((fd) => {
        try {
          return readlinkSync(`/proc/self/fd/${fd}`).startsWith(folder);
        } catch {
          return false;
        }
      }).length;
    const log = openBodyLog({ folder, segmentBytes: 10, floor: 0 });
    for (let n = 0; n < 40; n++) {
      log.append(Buffer.alloc(10, n));
      log.flush();
    }
    expect(readdirSync(folder)).toHaveLength(40);
    for (let n = 0; n < 40; n++) expect(log.read(n * 10, 10)).toEqual(Buffer.alloc(10, n));
    expect(openHere()).toBeLessThanOrEqual(16);
    // Listed again after a restart: sized without opening them.
    log.close();
    expect(openHere()).toBe(0);
    const again = openBodyLog({ folder, segmentBytes: 10, floor: 0 });
    expect(again.bytes()).toBe(400);
    expect(openHere()).toBe(0);
    for (let n = 39; n >= 0; n--) expect(again.read(n * 10, 10)).toEqual(Buffer.alloc(10, n));
    expect(openHere()).toBeLessThanOrEqual(16);
    expect(again.read(0, 10)).toEqual(Buffer.alloc(10, 0));
    again.append(Buffer.alloc(10, 99));
    again.flush();
    expect(again.read(400, 10)).toEqual(Buffer.alloc(10, 99));
    expect(openHere()).toBeLessThanOrEqual(16);
    again.close();
  });
});

describe('a search of bodies in the body log', () => {
  const texts = ['needle', 'NEEDLE', 'NeEdLe', 'é', 'É', '50%', 'a_b', 'back\\slash', '"quoted"', ''];
  const bodies = [
    '{"word":"Needle in a haystack"}',
    '{"price":"50% off","name":"a_b","path":"back\\\\slash"}',
    '{"city":"Zürich","e":"é"}',
    '{"quoted":"\\"quoted\\""}',
    'plain text with NEEDLE',
    '{"x":"axb","y":"50 percent"}',
  ];

  it("matches as SQLite's LIKE on the same bodies stored in the row: ASCII letters in any case, the rest exactly", () => {
    const store = createStore({ path: ':memory:', synchronous: 'normal' });
    stores.push(store);
    for (const text of texts) {
      const like = bodies.filter(
        (body) =>
          (
            store.db
              .prepare("SELECT CAST(? AS TEXT) LIKE ? ESCAPE '\\' AS hit")
              .get(body, `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`) as { hit: number }
          ).hit === 1,
      );
      const matches = bodyMatcher(text);
      expect(
        bodies.filter((body) => matches(Buffer.from(body))),
        text,
      ).toEqual(like);
    }
  });

  it('finds records by text in their bodies, newest first, and by id and event type', () => {
    const { store } = fileStore();
    store.transaction(() => {
      bodies.forEach((body, i) => {
        store.requests.insert({ ...record(`r${i}`, body), ...(i === 5 ? { eventType: 'push.Needle' } : {}) });
      });
    });
    const ids = (search: string, limit = 10) => store.requests.list({ search, limit }).map((e) => e.id);
    expect(ids('needle')).toEqual(['r5', 'r4', 'r0']);
    expect(ids('needle', 2)).toEqual(['r5', 'r4']);
    expect(ids('é')).toEqual(['r2']);
    expect(ids('r3')).toEqual(['r3']);
    expect(ids('50%')).toEqual(['r1']);
  });
});

describe('the body log in a folder someone else can write to', () => {
  it('never writes a body through a segment replaced by a symbolic link', () => {
    temp = makeTempDir();
    const folder = join(temp.dir, 'bodies');
    const first = openBodyLog({ folder, segmentBytes: 1000, floor: 0 });
    first.append(Buffer.from('first'));
    first.flush();
    first.close();
    // Planted: the segment is a link to a file of the attacker's, as long as the segment was.
    const [name] = readdirSync(folder);
    const theirs = join(temp.dir, 'theirs');
    writeFileSync(theirs, 'xxxxx');
    rmSync(join(folder, name as string));
    symlinkSync(theirs, join(folder, name as string));
    const log = openBodyLog({ folder, segmentBytes: 1000, floor: 0 });
    log.append(Buffer.from('secret payload'));
    expect(() => log.flush()).toThrow();
    log.close();
    expect(readFileSync(theirs, 'utf8')).toBe('xxxxx');
  });
});
