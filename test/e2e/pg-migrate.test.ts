import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isHookdError } from '../../src/errors.js';
import { migratePostgres } from '../../src/store/postgres/migrate.js';
import { pgMigrations } from '../../src/store/postgres/schema.js';
import { type PgCluster, postgresTestsRun, startPgCluster } from '../helpers/postgres.js';

/** The PostgreSQL schema and its migrations under an advisory lock (docs/scale.md). */

let cluster: PgCluster;
const clients: pg.Client[] = [];

beforeAll(async () => {
  if (postgresTestsRun) cluster = await startPgCluster();
}, 30_000);

afterAll(async () => {
  for (const client of clients.splice(0)) await client.end().catch(() => undefined);
  await cluster?.stop();
});

async function connect(database = 'hookd'): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: cluster.url.replace(/\/hookd$/, `/${database}`) });
  await client.connect();
  clients.push(client);
  return client;
}

/** A fresh, empty database of the cluster for one test. */
async function emptyDatabase(name: string): Promise<string> {
  const admin = await connect();
  await admin.query(`CREATE DATABASE ${name}`);
  return name;
}

describe.skipIf(!postgresTestsRun)('the PostgreSQL schema', () => {
  it('is created once when eight nodes start at the same moment on an empty database', async () => {
    const db = await emptyDatabase('race');
    const nodes = await Promise.all(Array.from({ length: 8 }, () => connect(db)));
    const outcomes = await Promise.all(nodes.map((client) => migratePostgres(client)));
    const applied = outcomes.filter((o) => o.from === 0);
    expect(applied).toEqual([{ from: 0, to: pgMigrations.length }]);
    expect(outcomes.filter((o) => o.from === pgMigrations.length)).toHaveLength(7);
    const { rows } = await (nodes[0] as pg.Client).query(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name",
    );
    expect(rows.map((r) => r.table_name)).toEqual([
      'console_sessions',
      'events',
      'failed_requests',
      'hookd_schema',
      'idempotency',
      'leases',
      'messages',
      'meta',
      'requests',
      'runs',
    ]);
    // Starting again changes nothing.
    expect(await migratePostgres(nodes[1] as pg.Client)).toEqual({
      from: pgMigrations.length,
      to: pgMigrations.length,
    });
  });

  it('rolls a failing migration back, keeps the version, and releases the lock', async () => {
    const db = await emptyDatabase('broken');
    const client = await connect(db);
    const broken = [...pgMigrations, 'CREATE TABLE extra (id INT); SELECT * FROM no_such_table;'];
    await expect(migratePostgres(client, broken)).rejects.toThrow(/no_such_table/);
    const { rows } = await client.query('SELECT version FROM hookd_schema');
    expect(rows).toEqual([{ version: pgMigrations.length }]);
    const extra = await client.query("SELECT to_regclass('public.extra') AS t");
    expect(extra.rows).toEqual([{ t: null }]);
    // Another node can take the lock at once (the failed one let it go).
    const other = await connect(db);
    expect(await migratePostgres(other)).toEqual({ from: pgMigrations.length, to: pgMigrations.length });
  });

  it('refuses a database written by a newer hookd', async () => {
    const db = await emptyDatabase('newer');
    const client = await connect(db);
    await migratePostgres(client);
    await client.query('UPDATE hookd_schema SET version = $1', [pgMigrations.length + 1]);
    const refused = await migratePostgres(client).catch((err: unknown) => err);
    expect(isHookdError(refused) && refused.code).toBe('STORE_SCHEMA_TOO_NEW');
    expect((refused as Error).message).toContain(`schema ${pgMigrations.length + 1}`);
  });
});
