import { statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createStore } from '../../../../src/store/sqlite/index.js';
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
