import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { createStore, type Store } from '../../../../src/store/sqlite/index.js';
import { migrations } from '../../../../src/store/sqlite/migrations.js';
import { makeTempDir } from '../../../helpers/hookd-process.js';

let temp: ReturnType<typeof makeTempDir> | undefined;
let store: Store | undefined;
afterEach(() => {
  store?.close();
  temp?.cleanup();
});

describe('store migrations', () => {
  it('renames columns and tables of a version-4 database to one name per concept, keeping its rows', () => {
    temp = makeTempDir();
    const path = `${temp.dir}/hookd.db`;
    const old = new Database(path);
    for (const migration of migrations.slice(0, 4)) old.exec(migration);
    old.pragma('user_version = 4');
    old
      .prepare(
        `INSERT INTO runs (id, session_key, message, model, wake_mode, deliver, channel, recipient, allow_unsafe,
           status, created_at) VALUES ('r1', 'hook:x', 'hi', 'builtin/echo', 'now', 1, 'chatnet', '42', 1, 'queued', 1)`,
      )
      .run();
    old
      .prepare(
        `INSERT INTO events (id, session_key, text, origin, trusted, created_at) VALUES ('e1', 'main', 'ping', 'hook', 1, 1)`,
      )
      .run();
    old
      .prepare(
        `INSERT INTO failed_deliveries (id, sub_path, url, headers, body, code, error, created_at)
         VALUES ('f1', 'github', '/hooks/github', '{}', x'7b7d', 'TRANSFORM_FAILED', 'boom', 1)`,
      )
      .run();
    old.close();

    store = createStore({ path, synchronous: 'normal' });
    expect(store.db.pragma('user_version', { simple: true })).toBe(migrations.length);
    expect(store.runs.get('r1')).toMatchObject({ to: '42', allowUnsafeExternalContent: true, channel: 'chatnet' });
    expect(store.events.get('e1')).toMatchObject({ allowUnsafeExternalContent: true, text: 'ping' });
    expect(store.failedRequests.pending()).toMatchObject([{ id: 'f1', subPath: 'github', code: 'TRANSFORM_FAILED' }]);
  });
});
