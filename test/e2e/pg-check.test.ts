import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTempDir, runHookd, startHookd, writeConfig } from '../helpers/hookd-process.js';
import { call } from '../helpers/http.js';
import { type PgCluster, postgresTestsRun, startPgCluster } from '../helpers/postgres.js';

/** `hookd check` on a PostgreSQL storage.url (docs/scale.md): what would stop `serve`, said before it runs. */

let cluster: PgCluster;
const cleanups: (() => unknown)[] = [];

beforeAll(async () => {
  if (!postgresTestsRun) return;
  cluster = await startPgCluster();
  const admin = new pg.Client({ connectionString: cluster.url });
  await admin.connect();
  await admin.query('CREATE DATABASE newer');
  await admin.query("CREATE ROLE limited LOGIN PASSWORD 'limited-pass'");
  await admin.end();
  const newer = new pg.Client({ connectionString: cluster.url.replace(/\/hookd$/, '/newer') });
  await newer.connect();
  await newer.query('CREATE TABLE hookd_schema (version INTEGER NOT NULL); INSERT INTO hookd_schema VALUES (99)');
  await newer.end();
}, 30_000);

afterAll(async () => {
  // Last made, first undone: a gateway stops before its folder goes.
  for (const fn of cleanups.splice(0).reverse()) await fn();
  await cluster?.stop();
});

async function check(url: string): Promise<{ code: number | null; out: string }> {
  const temp = makeTempDir();
  cleanups.push(temp.cleanup);
  const file = writeConfig(temp.dir, { storage: { kind: 'postgres', url } });
  const result = await runHookd(['check', '--config', file]);
  return { code: result.code, out: result.stdout + result.stderr };
}

describe.skipIf(!postgresTestsRun)('hookd check on PostgreSQL', () => {
  it('passes a reachable database, saying that serve will create the schema', async () => {
    const { code, out } = await check(cluster.url);
    expect(code, out).toBe(0);
    expect(out).toContain('the schema is at version 0');
    expect(out).not.toContain(cluster.password);
  });

  it('names what is wrong: the port, the password, the database, the rights, a newer schema', async () => {
    const base = new URL(cluster.url);
    const wrongPort = new URL(cluster.url);
    wrongPort.port = '1';
    const wrongPassword = new URL(cluster.url);
    wrongPassword.password = 'not-it';
    const cases: [string, RegExp][] = [
      [wrongPort.toString(), /cannot connect to .*127\.0\.0\.1:1.*ECONNREFUSED/],
      [wrongPassword.toString(), /refused the user or password/],
      [cluster.url.replace(/\/hookd$/, '/nothere'), /database "nothere" does not exist/],
      [`postgres://limited:limited-pass@127.0.0.1:${base.port}/hookd`, /user limited may not create tables/],
      [cluster.url.replace(/\/hookd$/, '/newer'), /written by a newer hookd \(schema 99/],
    ];
    for (const [url, expected] of cases) {
      const { code, out } = await check(url);
      expect(code, url).toBe(1);
      expect(out).toMatch(expected);
      expect(out).toContain('storage.url');
      expect(out).not.toContain(cluster.password);
      expect(out).not.toContain('not-it');
    }
  });
});

describe.skipIf(!postgresTestsRun)('hookd serve on a database it cannot use', () => {
  it('stops with what check would say, the password masked, not with a bare ECONNREFUSED', async () => {
    const wrongPort = new URL(cluster.url);
    wrongPort.port = '1';
    const wrongPassword = new URL(cluster.url);
    wrongPassword.password = 'not-it';
    const cases: [string, RegExp][] = [
      [
        wrongPort.toString(),
        /^hookd: storage\.url: cannot connect to postgres:\/\/hookd:\*\*\*@127\.0\.0\.1:1\/hookd \(ECONNREFUSED\): is PostgreSQL running/m,
      ],
      [wrongPassword.toString(), /^hookd: storage\.url: the server refused the user or password/m],
    ];
    for (const [url, expected] of cases) {
      const temp = makeTempDir();
      cleanups.push(temp.cleanup);
      const file = writeConfig(temp.dir, {
        server: { port: 0 },
        hooks: { enabled: true, token: 'serve-hook-token-0123456789' },
        storage: { kind: 'postgres', url },
      });
      const { code, stdout, stderr } = await runHookd(['serve', '--config', file]);
      expect(code, stdout + stderr).toBe(1);
      expect(stderr).toMatch(expected);
      expect(stdout + stderr).not.toContain(cluster.password);
      expect(stdout + stderr).not.toContain('not-it');
    }
  });
});

describe.skipIf(!postgresTestsRun)('a PostgreSQL whose max_connections leaves a node less room than its pool', () => {
  it('is a warning of check and of serve, which serves on', async () => {
    // 12 connections, 3 reserved for superusers, 2 held by others: room for 7 of a pool of 10.
    const small = await startPgCluster({ maxConnections: 12 });
    cleanups.push(() => small.stop());
    const others = [new pg.Client({ connectionString: small.url }), new pg.Client({ connectionString: small.url })];
    for (const other of others) await other.connect();
    cleanups.push(() => Promise.all(others.map((other) => other.end())));
    const temp = makeTempDir();
    cleanups.push(temp.cleanup);
    const config = {
      server: { port: 0 },
      hooks: { enabled: true, token: 'room-hook-token-0123456789' },
      storage: { kind: 'postgres', url: small.url, poolSize: 10 },
    };
    const file = writeConfig(temp.dir, config);
    const checked = await runHookd(['check', '--config', file]);
    const said = checked.stdout + checked.stderr;
    expect(checked.code, said).toBe(0);
    expect(said).toMatch(
      /PostgreSQL allows 12 connections \(3 reserved\) and 3 are in use: this node's pool of 10 may get only 7/,
    );
    const hookd = await startHookd({ dir: temp.dir, config });
    cleanups.push(() => hookd.stop());
    expect(hookd.stdout()).toMatch(/PostgreSQL allows 12 connections \(3 reserved\) and [34] are in use/);
    expect((await call(`${hookd.url}/healthz`, { method: 'GET' })).status).toBe(200);
    await hookd.stop();
    // A role that is no superuser sees the other roles' sessions with most of their columns
    // empty (`backend_type` too): they are counted all the same.
    const owner = new pg.Client({ connectionString: small.url });
    await owner.connect();
    await owner.query(
      "CREATE ROLE app LOGIN PASSWORD 'app-pass'; GRANT ALL ON SCHEMA public TO app; GRANT ALL ON ALL TABLES IN SCHEMA public TO app",
    );
    await owner.end();
    const asApp = new URL(small.url);
    asApp.username = 'app';
    asApp.password = 'app-pass';
    const appFile = writeConfig(makeTempDir().dir, {
      ...config,
      storage: { ...config.storage, url: asApp.toString() },
    });
    const byApp = await runHookd(['check', '--config', appFile]);
    expect(byApp.stdout + byApp.stderr).toMatch(/PostgreSQL allows 12 connections \(3 reserved\) and 3 are in use/);
    // Room enough: nothing said.
    const roomy = writeConfig(makeTempDir().dir, { ...config, storage: { ...config.storage, poolSize: 5 } });
    expect((await runHookd(['check', '--config', roomy])).stdout).not.toMatch(/max_connections/);
  }, 60_000);
});

describe('hookd check never prints the password of storage.url', () => {
  // Port 1 refuses at once: no PostgreSQL is needed to see what check says of the URL.
  const urls = [
    ['in the user part', 'postgres://hookd:user-part-secret-1@127.0.0.1:1/hookd', 'user-part-secret-1'],
    ['as ?password=', 'postgres://hookd@127.0.0.1:1/hookd?password=query-secret-2&sslmode=disable', 'query-secret-2'],
    ['percent-encoded', 'postgres://hookd@127.0.0.1:1/hookd?password=p%40ss%2Fw0rd-3', 'p@ss/w0rd-3'],
  ] as const;

  it.each(urls)('masks it %s, in text and in --json', async (_how, url, password) => {
    const temp = makeTempDir();
    cleanups.push(temp.cleanup);
    const file = writeConfig(temp.dir, { storage: { kind: 'postgres', url } });
    for (const args of [[], ['--json']]) {
      const result = await runHookd(['check', '--config', file, ...args]);
      const out = result.stdout + result.stderr;
      expect(result.code, out).toBe(1);
      expect(out).toContain('storage.url');
      expect(out).toMatch(/cannot connect to postgres:\/\/hookd(:\*\*\*)?@127\.0\.0\.1:1\/hookd/);
      expect(out).toContain('***');
      expect(out).not.toContain(password);
      expect(out).not.toContain(encodeURIComponent(password));
    }
  });
});
