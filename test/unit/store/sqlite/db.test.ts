import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { PAGE_BYTES } from '../../../../src/store/sqlite/db.js';
import { type AutoVacuumEvent, createStore } from '../../../../src/store/sqlite/index.js';
import { makeTempDir } from '../../../helpers/hookd-process.js';
import { runScript } from '../../../helpers/script.js';

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

  it("keeps the connection's page cache to 2 MB, so a burst of writes leaves little behind in the process", async () => {
    temp = makeTempDir();
    // In its own process: the C allocator's main heap ([heap] in smaps) is where SQLite's page
    // cache lives. 18 MB of rows written and read back grew it by 15.9 MB with better-sqlite3's
    // 16 MB cache, and by 1.5 MB with 2 MB.
    const script = `
      import { readFileSync } from 'node:fs';
      import { openDb } from ${JSON.stringify(resolve('src/store/sqlite/db.ts'))};
      const heapKb = () => {
        const smaps = readFileSync('/proc/self/smaps', 'utf8');
        const at = smaps.indexOf('[heap]');
        return at < 0 ? 0 : Number(/Rss:\\s+(\\d+)/.exec(smaps.slice(at))[1]);
      };
      const db = openDb({ path: ${JSON.stringify(join(temp.dir, 'hookd.db'))}, synchronous: 'normal' });
      db.exec('CREATE TABLE filler (id INTEGER PRIMARY KEY, body TEXT)');
      const insert = db.prepare('INSERT INTO filler (body) VALUES (?)');
      const before = heapKb();
      const body = 'x'.repeat(3000);
      for (let i = 0; i < 60; i++) db.transaction(() => { for (let j = 0; j < 100; j++) insert.run(body); })();
      db.prepare('SELECT sum(length(body)) AS n FROM filler').get();
      process.stdout.write(String(heapKb() - before));
    `;
    const grownKb = Number(await runScript(script));
    expect(grownKb).toBeLessThan(8 * 1024);
  });

  it('makes a new file with 16 KiB pages, and leaves an older file the pages it has', () => {
    temp = makeTempDir();
    const fresh = createStore({ path: join(temp.dir, 'new.db'), synchronous: 'normal' });
    expect(fresh.db.pragma('page_size', { simple: true })).toBe(PAGE_BYTES);
    expect(PAGE_BYTES).toBe(16_384);
    fresh.close();
    const path = join(temp.dir, 'old.db');
    const old = new Database(path);
    old.pragma('journal_mode = WAL');
    old.exec('CREATE TABLE kept (x)');
    old.close();
    const store = createStore({ path, synchronous: 'normal', onAutoVacuum: () => undefined });
    expect(store.db.pragma('page_size', { simple: true })).toBe(4096);
    store.close();
  });

  it('makes a new file give freed pages back, and rewrites an older file once to do so when asked', () => {
    temp = makeTempDir();
    const fresh = createStore({ path: join(temp.dir, 'new.db'), synchronous: 'normal' });
    expect(fresh.db.pragma('auto_vacuum', { simple: true })).toBe(2);
    fresh.close();
    const path = join(temp.dir, 'old.db');
    const old = new Database(path);
    old.pragma('journal_mode = WAL');
    old.exec('CREATE TABLE kept (x)');
    old.prepare('INSERT INTO kept VALUES (?)').run('a row');
    old.close();
    // A command opening the file beside the gateway leaves it as it is; the gateway rewrites it.
    const beside = createStore({ path, synchronous: 'normal' });
    expect(beside.db.pragma('auto_vacuum', { simple: true })).toBe(0);
    beside.close();
    const events: AutoVacuumEvent['phase'][] = [];
    const store = createStore({ path, synchronous: 'normal', onAutoVacuum: (e) => events.push(e.phase) });
    expect(store.db.pragma('auto_vacuum', { simple: true })).toBe(2);
    expect(store.db.prepare('SELECT x FROM kept').get()).toEqual({ x: 'a row' });
    expect(events).toEqual(['start', 'done']);
    store.close();
    const again: string[] = [];
    createStore({ path, synchronous: 'normal', onAutoVacuum: (e) => again.push(e.phase) }).close();
    expect(again).toEqual([]);
  });
});

describe('createStore', () => {
  it('tells of its first write once, and never while it only reads (an idle gateway starts no checkpoint thread)', async () => {
    let told = 0;
    const store = createStore({ path: ':memory:', synchronous: 'normal', onFirstWrite: () => told++ });
    store.events.pending('main', 10);
    store.runs.unfinished();
    expect(told).toBe(0);
    await store.group.write((w) => w.events.markConsumed(['none'], 1));
    await store.group.write((w) => w.events.markConsumed(['none'], 2));
    store.transaction(() => undefined);
    expect(told).toBe(1);
    store.close();
  });
});

describe('a database path that is a symbolic link', () => {
  it('never has its target made 0600 through it (a link planted in a shared folder)', () => {
    const temp = makeTempDir();
    try {
      const victim = join(temp.dir, 'victim.txt');
      writeFileSync(victim, 'not a database\n');
      chmodSync(victim, 0o644);
      const path = join(temp.dir, 'hookd.db');
      symlinkSync(victim, path);
      expect(() => createStore({ path, synchronous: 'normal' })).toThrow();
      expect(statSync(victim).mode & 0o777).toBe(0o644);
    } finally {
      temp.cleanup();
    }
  });
});

describe('a database path that is not a regular file', () => {
  // storage.path: '/tmp' made /tmp 0600 (as root: no other user could reach it, Dovecot's login
  // among them), and '/dev/null' made /dev/null 0600; then the database failed to open.
  it.each([
    ['a folder', (path: string) => mkdirSync(path, { mode: 0o1777 }), /is a folder, not a database file/],
    ['a FIFO', (path: string) => execFileSync('mkfifo', ['-m', '666', path]), /is a FIFO, not a database file/],
  ])('is refused as %s, naming storage.path, and its mode is left as it was', (_, make, problem) => {
    const temp = makeTempDir();
    try {
      const path = join(temp.dir, 'shared');
      make(path);
      const before = statSync(path).mode & 0o7777;
      expect(() => createStore({ path, synchronous: 'normal' })).toThrow(
        expect.objectContaining({ code: 'CONFIG_INVALID', params: { problems: [expect.stringMatching(problem)] } }),
      );
      expect(statSync(path).mode & 0o7777).toBe(before);
      expect(() => createStore({ path, synchronous: 'normal' })).toThrow(/- storage\.path: /);
    } finally {
      temp.cleanup();
    }
  });
});
