import type pg from 'pg';
import type { StoreBackend } from '../contract.js';
import { DB_NOW_MS } from './clock.js';
import { createPgContract, timedQuery } from './contract.js';
import { createPgSink } from './sink.js';
import { createPgWorkShare, type PgWorkShareOptions } from './work-share.js';

/** How long `ping` waits for its answer (a scrape waits 2 s at most). */
const PING_TIMEOUT_MS = 2000;

/**
 * PostgreSQL as the gateway runs on it (docs/scale.md): what every node shares, and how they split
 * the work; `now` is this node's clock, whose times the sink moves onto the database's.
 */
export function pgBackend(pool: pg.Pool, share: PgWorkShareOptions, now: () => number = Date.now): StoreBackend {
  const data = createPgContract(pool);
  const one = async (text: string, values: unknown[]) => (await pool.query(text, values)).rows[0];
  return {
    data,
    meta: {
      async get<T>(key: string) {
        const row = await one('SELECT value FROM meta WHERE key = $1', [key]);
        return row === undefined ? undefined : (JSON.parse(row.value as string) as T);
      },
      async set(key, value) {
        await pool.query(
          'INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value',
          [key, JSON.stringify(value)],
        );
      },
    },
    consoleSessions: {
      async insert({ tokenHash, csrf, ttlMs }) {
        await pool.query(
          `INSERT INTO console_sessions (token_hash, csrf, created_at, expires_at)
           SELECT $1, $2, now, now + $3 FROM (SELECT ${DB_NOW_MS} AS now) AS clock`,
          [tokenHash, csrf, ttlMs],
        );
      },
      async find(tokenHash) {
        const row = await one(`SELECT * FROM console_sessions WHERE token_hash = $1 AND expires_at > ${DB_NOW_MS}`, [
          tokenHash,
        ]);
        return (
          row && {
            tokenHash: row.token_hash as string,
            csrf: row.csrf as string,
            createdAt: row.created_at as number,
            expiresAt: row.expires_at as number,
          }
        );
      },
      async delete(tokenHash) {
        await pool.query('DELETE FROM console_sessions WHERE token_hash = $1', [tokenHash]);
      },
      async prune(keep) {
        const expired = await pool.query(`DELETE FROM console_sessions WHERE expires_at <= ${DB_NOW_MS}`);
        const beyond = await pool.query(
          `DELETE FROM console_sessions WHERE token_hash IN
             (SELECT token_hash FROM console_sessions ORDER BY created_at DESC OFFSET $1)`,
          [keep],
        );
        return (expired.rowCount ?? 0) + (beyond.rowCount ?? 0);
      },
    },
    createSink: (options) => createPgSink(pool, data, { now, ...options }),
    share: createPgWorkShare(pool, share),
    async ping() {
      await pool.query(timedQuery('SELECT 1', undefined, PING_TIMEOUT_MS));
    },
  };
}
