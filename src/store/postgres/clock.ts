import type pg from 'pg';
import type { Clock } from '../../clock.js';

/**
 * The database's clock in epoch milliseconds, as SQL: every time that decides expiry, retention
 * or a lease on the shared store is read from it, never from a node, so that one node's wrong
 * clock cannot expire or delete what the others keep.
 */
export const DB_NOW_MS = '(extract(epoch FROM clock_timestamp()) * 1000)::bigint';

/**
 * How far this node's clock is ahead of the database's (negative: behind), in milliseconds:
 * the database's time against the middle of the round trip that read it.
 */
export async function clockSkewMs(db: pg.Pool | pg.PoolClient, now: () => number = Date.now): Promise<number> {
  const sentAt = now();
  const { rows } = await db.query<{ now: number }>(`SELECT ${DB_NOW_MS} AS now`);
  const answeredAt = now();
  return Math.round((sentAt + answeredAt) / 2 - (rows[0]?.now ?? answeredAt));
}

/** A node's clock this far from the database's, either way, is worth a warning. */
export const CLOCK_SKEW_WARN_MS = 2000;

/**
 * A time a node stamped (`time`, SQL) as the database's clock has it: moved by how far the
 * node's clock (`nodeNow`, read as the statement was made) is from the database's (`dbNow`),
 * when that is more than CLOCK_SKEW_WARN_MS; a node closer than that keeps its exact times (the
 * difference is then mostly the statement's own way to the database).
 */
export function onDbClock(time: string, nodeNow: string, dbNow: string = DB_NOW_MS): string {
  const skew = `(${dbNow} - ${nodeNow})`;
  return `${time} + (CASE WHEN abs${skew} > ${CLOCK_SKEW_WARN_MS} THEN ${skew} ELSE 0 END)`;
}

export interface ClockSkewWatch {
  /** The last skew measured (ms, this node ahead when positive); undefined before the first. */
  readonly skewMs: number | undefined;
  stop(): void;
}

/**
 * Measures this node's clock against the database's now and every `everyMs`, telling `onSkew`
 * of each measure (a failed one is skipped: the connection's own errors are logged elsewhere).
 */
export async function watchClockSkew(
  pool: pg.Pool,
  options: { readonly clock: Clock; readonly everyMs: number; readonly onSkew: (skewMs: number) => void },
): Promise<ClockSkewWatch> {
  let skewMs: number | undefined;
  const measure = async () => {
    try {
      skewMs = await clockSkewMs(pool, options.clock.now);
      options.onSkew(skewMs);
    } catch {
      // Unreachable for now: the next measure tries again.
    }
  };
  await measure();
  const stop = options.clock.setInterval(() => void measure(), options.everyMs);
  return {
    get skewMs() {
      return skewMs;
    },
    stop,
  };
}
