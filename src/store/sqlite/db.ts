import { closeSync, constants, fchmodSync, fstatSync, lstatSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { hookdError } from '../../errors.js';
import { kindOf } from '../../read-file.js';
import { migrations } from './migrations.js';

export type Db = Database.Database;

export interface OpenDbOptions {
  /** A file path, or `:memory:`. */
  path: string;
  /** `normal`: survives a process crash (WAL); `full`: also a power loss. */
  synchronous: 'normal' | 'full';
  /** WAL bytes after which a commit checkpoints (SQLite's default: 1000 pages). */
  autocheckpointBytes?: number;
  /**
   * Given, a file made before `auto_vacuum` was turned on is rewritten to have it (once, by the
   * gateway: not by a command that opens the file beside it), and this is told how it went.
   */
  onAutoVacuum?: (event: AutoVacuumEvent) => void;
}

/**
 * The page size of a file this version makes (SQLite's default is 4 KiB). A hook request
 * writes a 2 KB run row and a 4 KB log record: on 4 KiB pages two run rows never share a page
 * and a record spills into an overflow page, and every page is two writes to the WAL and two
 * more (a read, a write) when it is copied back. On 16 KiB pages rows pack, and a commit makes
 * a quarter of the system calls (docs/operations.md#commits-and-checkpoints).
 */
export const PAGE_BYTES = 16_384;

/** The one-time rewrite of a file made without `auto_vacuum`: starting, done, or failed (the file stays as it was). */
export type AutoVacuumEvent =
  | { readonly phase: 'start'; readonly bytes: number }
  | { readonly phase: 'done'; readonly ms: number; readonly bytes: number }
  | { readonly phase: 'failed'; readonly err: unknown };

/** Opens (creating its folder) and migrates the SQLite database. */
export function openDb(options: OpenDbOptions): Db {
  if (options.path !== ':memory:') createPrivately(options.path);
  const db = new Database(options.path);
  // A new file gives the pages that pruning frees back to the file system (`PRAGMA
  // incremental_vacuum`, docs/operations.md#retention): set before WAL mode and the first table.
  const fresh =
    (db.prepare("SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'table'").get() as { n: number }).n === 0;
  if (fresh) {
    db.pragma(`page_size = ${PAGE_BYTES}`);
    db.pragma('auto_vacuum = INCREMENTAL');
  }
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${options.synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
  db.pragma('busy_timeout = 5000');
  if (options.autocheckpointBytes !== undefined)
    db.pragma(`wal_autocheckpoint = ${Math.ceil(options.autocheckpointBytes / pageBytesOf(db))}`);
  // A WAL file grown by a burst is cut back to this size once it has been copied back.
  db.pragma('journal_size_limit = 67108864');
  db.pragma('foreign_keys = ON');
  // SQLite's own default (better-sqlite3 builds with 16 MB): memory a page cache once held stays
  // with the process after a burst, and a larger one was no faster (docs/operations.md).
  db.pragma('cache_size = -2000');
  migrate(db);
  if (!fresh && options.onAutoVacuum) turnOnAutoVacuum(db, options.onAutoVacuum);
  return db;
}

/** The page size of the open file (files made before PAGE_BYTES keep their 4 KiB pages). */
export function pageBytesOf(db: Db): number {
  return db.pragma('page_size', { simple: true }) as number;
}

/**
 * A file made before hookd turned `auto_vacuum` on gets it by a VACUUM, which rewrites the whole
 * file (it needs as much free disk again, once). Should that fail, the file stays as it was:
 * pruned pages are then reused, never given back (docs/operations.md#retention).
 */
function turnOnAutoVacuum(db: Db, tell: (event: AutoVacuumEvent) => void): void {
  if (db.pragma('auto_vacuum', { simple: true }) === 2) return;
  const fileBytes = () => (db.pragma('page_count', { simple: true }) as number) * pageBytesOf(db);
  const bytes = fileBytes();
  tell({ phase: 'start', bytes });
  const started = performance.now();
  try {
    db.pragma('auto_vacuum = INCREMENTAL');
    db.exec('VACUUM');
    tell({ phase: 'done', ms: Math.round(performance.now() - started), bytes: fileBytes() });
  } catch (err) {
    tell({ phase: 'failed', err });
  }
}

/**
 * Creates the database file (and its folder) readable by its owner only: it holds payloads,
 * transcripts and replies. SQLite gives the WAL and shared-memory files the same mode. Only a
 * regular file is made private: `storage.path` naming a folder or a device (`/tmp`, `/dev/null`)
 * had that made 0600 (as root, the whole machine's), and then failed to open.
 */
function createPrivately(path: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const stats = lstatSync(path, { throwIfNoEntry: false });
  if (stats) {
    // A link's target is not this file to change: the mode of one planted in a shared folder
    // must not be changed through it.
    if (stats.isSymbolicLink()) return;
    if (!stats.isFile()) {
      throw hookdError('CONFIG_INVALID', {
        problems: [`storage.path: ${path} is ${kindOf(stats)}, not a database file`],
      });
    }
    let fd: number | undefined;
    try {
      // Changed through the file opened, never by its path again: it may have been swapped.
      fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
      if (fstatSync(fd).isFile()) fchmodSync(fd, 0o600);
    } catch {
      // Not ours to change (another owner): it stays as its owner set it.
    } finally {
      if (fd !== undefined) closeSync(fd);
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
