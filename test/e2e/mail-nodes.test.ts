import type pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createPgPool } from '../../src/store/postgres/contract.js';
import { rfc822 } from '../helpers/dovecot.js';
import { isHeartbeat, lastUser, startFakeModel } from '../helpers/fake-model.js';
import { type HookdProcess, makeTempDir, startHookd } from '../helpers/hookd-process.js';
import { call } from '../helpers/http.js';
import { cleanups, dovecot, env, GATEWAY, mailConfig, mailTestsRun } from '../helpers/mail-watch.js';
import { postgresTestsRun, suiteStore } from '../helpers/postgres.js';

/**
 * The mail watcher on several nodes (docs/scale.md): one node at a time watches the mailbox (the
 * `mail` lease), its cursor is in PostgreSQL, and when that node dies another takes over where it
 * stopped: every message reaches the model once.
 */

const store = suiteStore('postgres');
afterAll(() => store.stop());

describe.skipIf(!mailTestsRun || !postgresTestsRun)('the mail watcher on two nodes of one PostgreSQL', () => {
  it('runs on one node; when it is killed the other goes on from the shared cursor', async () => {
    const imap = await dovecot();
    const model = await startFakeModel((r) => (isHeartbeat(r) ? 'HEARTBEAT_OK' : 'noted'));
    cleanups.push(() => model.close());
    const storage = await store.storage('mail');
    const start = async () => {
      const temp = makeTempDir();
      cleanups.push(temp.cleanup);
      const node = await startHookd({
        dir: temp.dir,
        config: { ...mailConfig(imap, { modelUrl: model.url }), storage },
        env,
      });
      cleanups.push(() => node.stop());
      return node;
    };
    const nodes = [await start(), await start()];
    const pool: pg.Pool = createPgPool(storage.url as string, { max: 2 });
    cleanups.push(() => pool.end());
    const owner = async () => {
      const { rows } = await pool.query("SELECT owner FROM leases WHERE name = 'mail'");
      const pid = Number(String(rows[0]?.owner ?? '').split(':')[1]);
      return nodes.find((node) => node.child.pid === pid);
    };
    const agentSubjects = () =>
      model.requests.filter((r) => !isHeartbeat(r)).map((r) => /Subject: (Test message \d)/.exec(lastUser(r))?.[1]);

    await imap.append(rfc822(1));
    await expect.poll(() => agentSubjects().length, { timeout: 15_000 }).toBe(1);
    const watching = (await owner()) as HookdProcess;
    expect(watching).toBeDefined();
    // The status is on the node that watches; the other one has no watcher running.
    const statuses = await Promise.all(
      nodes.map((node) =>
        call(`${node.url}/api/mail/status`, { method: 'GET', headers: { authorization: `Bearer ${GATEWAY}` } }),
      ),
    );
    expect(statuses.map((s) => s.status).sort()).toEqual([200, 404]);

    watching.child.kill('SIGKILL');
    await watching.exited;
    await imap.append(rfc822(2));
    await imap.append(rfc822(3));
    // Taken over once the killed node's 2 s lease lapsed.
    await expect.poll(() => agentSubjects().length, { timeout: 20_000 }).toBe(3);
    const survivor = nodes.find((node) => node !== watching);
    expect((await owner()) === survivor).toBe(true);
    await imap.append(rfc822(4));
    await expect.poll(() => agentSubjects().includes('Test message 4'), { timeout: 15_000 }).toBe(true);
    expect(agentSubjects().sort()).toEqual(['Test message 1', 'Test message 2', 'Test message 3', 'Test message 4']);
  }, 60_000);
});
