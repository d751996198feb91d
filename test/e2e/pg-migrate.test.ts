import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isHookdError } from '../../src/errors.js';
import { migratePostgres } from '../../src/store/postgres/migrate.js';
import { pgMigrations } from '../../src/store/postgres/schema.js';
import { createStore } from '../../src/store/sqlite/index.js';
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

type Columns = Record<string, Record<string, string>>;

/** The SQLite store's tables and their columns' declared types. */
function sqliteColumns(): Columns {
  const store = createStore({ path: ':memory:', synchronous: 'normal' });
  try {
    const tables = store.db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[];
    return Object.fromEntries(
      tables
        .filter((t) => !t.name.startsWith('sqlite_'))
        .map((t) => {
          const columns = store.db.prepare(`PRAGMA table_info(${t.name})`).all() as { name: string; type: string }[];
          return [t.name, Object.fromEntries(columns.map((c) => [c.name, c.type]))];
        }),
    );
  } finally {
    store.close();
  }
}

/** What each SQLite type is in PostgreSQL (flags are 0/1 integers in one, booleans in the other). */
const SAME_TYPE: Record<string, readonly string[]> = {
  TEXT: ['text'],
  INTEGER: ['bigint', 'integer', 'boolean'],
  BLOB: ['bytea'],
};
/** What only one store has, and why. */
const ONLY_POSTGRES = new Set([
  'hookd_schema', // its migrations' version (SQLite keeps it in user_version)
  'leases', // single-owner jobs among nodes
  'runs.lease_owner', // run leases among nodes
  'runs.lease_until',
]);
const ONLY_SQLITE = new Set([
  // A request's body in the body log beside the SQLite file (PostgreSQL keeps it in the row).
  'requests.body_at',
  'requests.body_len',
]);

describe.skipIf(!postgresTestsRun)('the PostgreSQL schema', () => {
  it('has the tables and columns of the SQLite store, with the same types, the leases besides, the body log aside', async () => {
    const client = await connect(await emptyDatabase('agree'));
    await migratePostgres(client);
    const { rows } = await client.query<{ table_name: string; column_name: string; data_type: string }>(
      "SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_schema = 'public'",
    );
    const postgres: Columns = {};
    for (const r of rows) postgres[r.table_name] = { ...postgres[r.table_name], [r.column_name]: r.data_type };
    const sqlite = sqliteColumns();
    const problems: string[] = [];
    for (const table of new Set([...Object.keys(sqlite), ...Object.keys(postgres)])) {
      const [lite, pgColumns] = [sqlite[table], postgres[table]];
      if (!lite || !pgColumns) {
        if (!ONLY_POSTGRES.has(table) || lite) problems.push(`${table}: only in ${lite ? 'SQLite' : 'PostgreSQL'}`);
        continue;
      }
      for (const column of new Set([...Object.keys(lite), ...Object.keys(pgColumns)])) {
        const [a, b] = [lite[column], pgColumns[column]];
        if (a === undefined || b === undefined) {
          if (!(a === undefined ? ONLY_POSTGRES : ONLY_SQLITE).has(`${table}.${column}`))
            problems.push(`${table}.${column}: only in ${a ? 'SQLite' : 'PostgreSQL'}`);
        } else if (!SAME_TYPE[a]?.includes(b)) problems.push(`${table}.${column}: ${a} in SQLite, ${b} in PostgreSQL`);
      }
    }
    expect(problems).toEqual([]);
    // The check sees a difference when there is one.
    expect(SAME_TYPE.TEXT?.includes(postgres.runs?.created_at ?? '')).toBe(false);
  });

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
      'alerts',
      'console_sessions',
      'events',
      'failed_requests',
      'hookd_schema',
      'idempotency',
      'leases',
      'messages',
      'meta',
      'requests',
      'run_attempts',
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
