import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { migrations } from './migrations.js';

export type Db = Database.Database;

export interface OpenDbOptions {
  /** A file path, or `:memory:`. */
  path: string;
  /** `normal`: survives a process crash (WAL); `full`: also a power loss. */
  synchronous: 'normal' | 'full';
}

/** Opens (creating its folder) and migrates the SQLite database. */
export function openDb(options: OpenDbOptions): Db {
  if (options.path !== ':memory:') mkdirSync(dirname(options.path), { recursive: true });
  const db = new Database(options.path);
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${options.synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
  db.pragma('busy_timeout = 5000');
  db.pragma('foreign_keys = ON');
  migrate(db);
  return db;
}

function migrate(db: Db): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > migrations.length) {
    throw new Error(
      `the database was written by a newer hookd (schema ${current}, this one knows ${migrations.length})`,
    );
  }
  for (let version = current; version < migrations.length; version++) {
    db.transaction(() => {
      db.exec(migrations[version] as string);
      db.pragma(`user_version = ${version + 1}`);
    })();
  }
}
