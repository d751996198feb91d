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

  it('masks the credential values that records stored before, and counts those records authenticated, bodies whole', () => {
    temp = makeTempDir();
    const path = `${temp.dir}/hookd.db`;
    const old = new Database(path);
    // Up to the migration that masks them (later ones append columns of their own).
    const before = migrations.findIndex((m) => m.includes('ADD COLUMN client_address'));
    for (const migration of migrations.slice(0, before)) old.exec(migration);
    old.pragma(`user_version = ${before}`);
    const headers = JSON.stringify({
      'x-gitlab-token': 'the-secret',
      'x-hub-signature-256': 'sha256=ab',
      'x-event': 'push',
    });
    old
      .prepare(
        `INSERT INTO requests (id, received_at, path, url, status, duration_ms, headers, body, body_bytes, truncated)
         VALUES ('q1', 1, 'gitlab', '/hooks/gitlab', 202, 1, ?, x'7b7d', 2, 0), ('q2', 2, 'x', '/hooks/x', 200, 1, '{}', x'7b', 9, 1)`,
      )
      .run(headers);
    old
      .prepare(
        `INSERT INTO failed_requests (id, request_id, sub_path, url, headers, body, code, error, created_at)
         VALUES ('f1', 'q1', 'gitlab', '/hooks/gitlab', ?, x'7b7d', 'TRANSFORM_FAILED', 'boom', 1)`,
      )
      .run(headers);
    old.close();

    store = createStore({ path, synchronous: 'normal' });
    const masked = { 'x-gitlab-token': '[masked]', 'x-hub-signature-256': '[masked]', 'x-event': 'push' };
    expect(store.requests.get('q1')).toMatchObject({ headers: masked, authenticated: true, bodyWhole: true });
    expect(store.requests.get('q2')).toMatchObject({ truncated: true, bodyWhole: false });
    expect(store.failedRequests.forRequest('q1')).toMatchObject({ headers: masked, redacted: false });
    expect(JSON.stringify(store.db.prepare('SELECT headers FROM requests').all())).not.toContain('the-secret');
  });
});
