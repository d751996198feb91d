import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { hookdError } from '../../errors.js';
import { migrations } from './migrations.js';

export type Db = Database.Database;

export interface OpenDbOptions {
  /** A file path, or `:memory:`. */
  path: string;
  /** `normal`: survives a process crash (WAL); `full`: also a power loss. */
  synchronous: 'normal' | 'full';
  /** WAL pages after which a commit checkpoints (SQLite's default: 1000). */
  autocheckpointPages?: number;
}

/** Opens (creating its folder) and migrates the SQLite database. */
export function openDb(options: OpenDbOptions): Db {
  if (options.path !== ':memory:') createPrivately(options.path);
  const db = new Database(options.path);
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${options.synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
  db.pragma('busy_timeout = 5000');
  if (options.autocheckpointPages !== undefined) db.pragma(`wal_autocheckpoint = ${options.autocheckpointPages}`);
  // A WAL file grown by a burst is cut back to this size once it has been copied back.
  db.pragma('journal_size_limit = 67108864');
  db.pragma('foreign_keys = ON');
  // SQLite's own default (better-sqlite3 builds with 16 MB): memory a page cache once held stays
  // with the process after a burst, and a larger one was no faster (docs/operations.md).
  db.pragma('cache_size = -2000');
  migrate(db);
  return db;
}

/**
 * Creates the database file (and its folder) readable by its owner only: it holds payloads,
 * transcripts and replies. SQLite gives the WAL and shared-memory files the same mode.
 */
function createPrivately(path: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  if (existsSync(path)) {
    try {
      chmodSync(path, 0o600);
    } catch {
      // Not ours to change (another owner): it stays as its owner set it.
    }
    return;
  }
  closeSync(openSync(path, 'a', 0o600));
}

function migrate(db: Db): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > migrations.length) {
    throw hookdError('STORE_SCHEMA_TOO_NEW', { found: current, known: migrations.length });
  }
  for (let version = current; version < migrations.length; version++) {
    db.transaction(() => {
      db.exec(migrations[version] as string);
      db.pragma(`user_version = ${version + 1}`);
    })();
  }
}
