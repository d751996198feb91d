import pg from 'pg';
import { hookdError } from '../../errors.js';
import { withClient } from './contract.js';
import { pgMigrations } from './schema.js';

/**
 * Every hookd node takes this session-level advisory lock to migrate, so that nodes starting
 * at the same moment on an empty database apply each migration once, the others waiting and
 * then finding the schema current. (The number is "hookd" in ASCII.)
 */
const MIGRATION_LOCK = 0x686f6f6b64;

/**
 * Applies the migrations a database lacks, each in its own transaction, under the advisory
 * lock; refuses a database written by a newer hookd (`STORE_SCHEMA_TOO_NEW`). Returns the
 * versions before and after. Given a pool, it takes one connection for all of it (the lock and
 * the transactions belong to a connection).
 */
export async function migratePostgres(
  db: pg.Pool | pg.ClientBase,
  migrations: readonly string[] = pgMigrations,
): Promise<{ from: number; to: number }> {
  if (db instanceof pg.Pool) return withClient(db, (client) => migrateOn(client, migrations));
  return migrateOn(db, migrations);
}

async function migrateOn(client: pg.ClientBase, migrations: readonly string[]): Promise<{ from: number; to: number }> {
  await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
  try {
    await client.query('CREATE TABLE IF NOT EXISTS hookd_schema (version INTEGER NOT NULL)');
    const { rows } = await client.query('SELECT version FROM hookd_schema');
    const from = rows.length === 0 ? 0 : Number(rows[0]?.version);
    if (rows.length === 0) await client.query('INSERT INTO hookd_schema (version) VALUES (0)');
    if (from > migrations.length) throw hookdError('STORE_SCHEMA_TOO_NEW', { found: from, known: migrations.length });
    for (let version = from; version < migrations.length; version++) {
      await client.query('BEGIN');
      try {
        await client.query(migrations[version] as string);
        await client.query('UPDATE hookd_schema SET version = $1', [version + 1]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK');
        throw err;
      }
    }
    return { from, to: Math.max(from, migrations.length) };
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
  }
}
