import pg from 'pg';
import type { StoreContract, Writes } from '../contract.js';
import { createCommitQueue, type WriteOptions } from '../group-commit.js';
import { commitInDoubt, isStoreUnavailable } from '../unavailable.js';
import { createPgAlerts } from './alerts.js';
import { DB_NOW_MS } from './clock.js';
import { createPgLogTables } from './log-tables.js';
import { pgEventReads, pgFailedRequestReads, pgMessageReads, pgRequestReads, pgRunReads } from './reads.js';
import type { PgStatement } from './rows.js';
import { createPgWrites } from './writes.js';

const INT8 = 20;

/** How long a connection may take to open, and a query to answer, before it counts as failed. */
const CONNECT_TIMEOUT_MS = 5000;
const QUERY_TIMEOUT_MS = 30_000;
/** The server ends a statement this node gave up on (a little after this node did). */
const STATEMENT_TIMEOUT_MS = QUERY_TIMEOUT_MS + 5000;
/** The server ends a session left inside a transaction this long (hookd's last milliseconds). */
export const IDLE_IN_TRANSACTION_MS = 15_000;

export interface PgPoolOptions {
  /** Connections at most (`storage.poolSize`; default 10). */
  readonly max?: number;
  readonly idleInTransactionMs?: number;
  /** How long a query may go unanswered (default 30 s; shorter in tests of a frozen server). */
  readonly queryTimeoutMs?: number;
  /** What `pg_stat_activity` names its connections: a node's id, so that an operator sees which node holds what. */
  readonly applicationName?: string;
}

/**
 * A pool whose 64-bit integers (sequence numbers, epoch milliseconds, counts) read as numbers.
 * Every wait on the server is bounded: a database that goes silent (packets dropped, not
 * refused) fails connections after 5 s and queries after 30 s, and TCP keep-alive finds a
 * connection whose peer vanished, so that accepts answer 503 and shutdowns end. The server
 * bounds the other side: a node cut off or frozen inside a transaction (a partition, a paused
 * VM) has it rolled back after `idleInTransactionMs`, so that the rows it locked (an
 * idempotency key a sender retries on another node, its runs) do not wait for it for hours.
 * Both are set by a `SET` as each connection opens, not as startup parameters, which PgBouncer
 * refuses unless told to ignore them.
 */
export function createPgPool(url: string, options: PgPoolOptions = {}): pg.Pool {
  const { max = 10, idleInTransactionMs = IDLE_IN_TRANSACTION_MS, applicationName } = options;
  const queryTimeoutMs = options.queryTimeoutMs ?? QUERY_TIMEOUT_MS;
  const timeouts = `SET statement_timeout = ${queryTimeoutMs + STATEMENT_TIMEOUT_MS - QUERY_TIMEOUT_MS}; SET idle_in_transaction_session_timeout = ${Math.round(idleInTransactionMs)}`;
  return new pg.Pool({
    connectionString: url,
    max,
    ...(applicationName === undefined ? {} : { application_name: applicationName }),
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    query_timeout: queryTimeoutMs,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8 ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format)) as never,
    },
    // Awaited before the connection is handed out: a query sent beside this one would be queued by
    // pg, which warns that version 9 refuses it. A connection whose timeouts could not be set is
    // closed, and the query that asked for it fails with why.
    onConnect: async (client) => {
      await client.query(timeouts);
    },
  });
}

/**
 * Runs `use` on a connection of its own. The connection's `error` event (the server went away
 * mid-transaction) is listened to, which pg leaves to the caller of `connect` and which would
 * otherwise end the process; a connection whose server is out of reach is discarded instead of
 * reused.
 */
export async function withClient<T>(pool: pg.Pool, use: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let failed: Error | undefined;
  const onError = (err: Error) => {
    failed = err;
  };
  client.on('error', onError);
  try {
    return await use(client);
  } catch (err) {
    failed ??= isStoreUnavailable(err) ? (err as Error) : undefined;
    throw err;
  } finally {
    client.off('error', onError);
    client.release(failed);
  }
}

/** How long a query of `pool` may go unanswered (createPgPool's `queryTimeoutMs`, else 30 s). */
export function queryTimeoutOf(pool: pg.Pool): number {
  const own = (pool as unknown as { options: { query_timeout?: number } }).options.query_timeout;
  return own !== undefined && own > 0 ? own : QUERY_TIMEOUT_MS;
}

/** A query that fails after `timeoutMs` unanswered: pg reads `query_timeout` per query, which its types do not declare. */
export function timedQuery(text: string, values: unknown[] | undefined, timeoutMs: number | undefined): pg.QueryConfig {
  const config = {
    text,
    ...(values ? { values } : {}),
    ...(timeoutMs === undefined ? {} : { query_timeout: timeoutMs }),
  };
  return config as pg.QueryConfig;
}

/**
 * Runs `use` in a transaction on a connection of its own: committed when it resolves, else rolled
 * back. A `COMMIT` sent and never answered fails as a commit in doubt (commitInDoubt). On a
 * server out of reach no `ROLLBACK` is sent (it would wait out a time-out of its own): the
 * connection is discarded, and the server rolls back a session that ends inside a transaction.
 * `timeoutMs` bounds `BEGIN` and `COMMIT` (default: the pool's query time-out).
 */
export function inTransaction<T>(
  pool: pg.Pool,
  use: (client: pg.PoolClient) => Promise<T>,
  timeoutMs?: number,
): Promise<T> {
  const statement = (text: string) => timedQuery(text, undefined, timeoutMs);
  return withClient(pool, async (client) => {
    try {
      await client.query(statement('BEGIN'));
      const value = await use(client);
      await client.query(statement('COMMIT')).catch((err: unknown) => {
        throw commitInDoubt(err);
      });
      return value;
    } catch (err) {
      if (!isStoreUnavailable(err)) await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    }
  });
}

/** A commit's writes as recorded: what `write` returned, and the statements it made. */
export interface Recorded<T> {
  readonly value: T;
  readonly statements: PgStatement[];
}

/**
 * The store contract over PostgreSQL (docs/scale.md): the same reads as the embedded store, as
 * queries; writes recorded and sent in one transaction per commit (a group commit per
 * event-loop turn, or one of their own). Tables and columns are the SQLite store's, so rows
 * become records through the same functions.
 */
export function createPgContract(pool: pg.Pool): StoreContract {
  // One group commit at a time, in order: a run's `running` must never land after its result.
  const queue = createCommitQueue<Recorded<unknown>, unknown>({
    commit: async (items) => {
      await runStatements(
        pool,
        items.map((item) => item.statements),
      );
      return items.map((item) => item.value);
    },
  });
  return {
    events: pgEventReads(pool),
    runs: pgRunReads(pool),
    messages: pgMessageReads(pool),
    requests: pgRequestReads(pool),
    log: createPgLogTables(pool),
    failedRequests: pgFailedRequestReads(pool),
    idempotency: {
      purgeExpired: async () =>
        (await pool.query(`DELETE FROM idempotency WHERE expires_at <= ${DB_NOW_MS}`)).rowCount ?? 0,
    },
    alerts: createPgAlerts(pool),
    group: {
      write<T>(write: (w: Writes) => T, options?: WriteOptions): Promise<T> {
        let recorded: Recorded<T>;
        try {
          recorded = recordWrites(write);
        } catch (err) {
          return Promise.reject(err);
        }
        return queue.add(recorded, options?.linger) as Promise<T>;
      },
      flush: queue.flush,
    },
    async commit(write) {
      const { value, statements } = recordWrites(write);
      await runStatements(pool, [statements]);
      return value;
    },
  };
}

/** Runs each group's statements in one transaction; the caller settles the groups. */
export function runStatements(pool: pg.Pool, groups: readonly (readonly PgStatement[])[]): Promise<void> {
  return inTransaction(pool, async (client) => {
    for (const group of groups)
      for (const statement of group) await client.query(statement.text, [...statement.values]);
  });
}

/** What `write` returns, and the statements it made through the writes it was given. */
export function recordWrites<T>(write: (w: Writes) => T): Recorded<T> {
  const recorder = createPgWrites();
  const value = write(recorder.writes);
  return { value, statements: recorder.statements };
}
