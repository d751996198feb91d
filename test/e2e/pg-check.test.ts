import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTempDir, runHookd, writeConfig } from '../helpers/hookd-process.js';
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
  for (const fn of cleanups.splice(0)) await fn();
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
