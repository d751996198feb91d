import type { Db } from './db.js';

/** Small named values (the main session's last delivery route, cursors), stored as JSON. */
export interface MetaRepository {
  get<T>(key: string): T | undefined;
  set(key: string, value: unknown): void;
}

/** The SQLite meta repository. */
export function createMetaRepository(db: Db): MetaRepository {
  const get = db.prepare('SELECT value FROM meta WHERE key = ?');
  const set = db.prepare(
    'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
  );
  return {
    get<T>(key: string): T | undefined {
      const row = get.get(key) as { value: string } | undefined;
      return row === undefined ? undefined : (JSON.parse(row.value) as T);
    },
    set(key: string, value: unknown): void {
      set.run(key, JSON.stringify(value));
    },
  };
}
