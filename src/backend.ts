import { randomUUID } from 'node:crypto';
import { type Stats, statSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import type pg from 'pg';
import type { Clock } from './clock.js';
import type { Config } from './config/index.js';
import type { Logger } from './log.js';
import { causeOf, isStoreUnavailable, type StoreBackend } from './store/index.js';
import type { ClockSkewWatch } from './store/postgres/index.js';
import {
  type AutoVacuumEvent,
  bodySegmentBytesFor,
  type Checkpointer,
  createStore,
  type Store,
  sqliteBackend,
  startCheckpointer,
  WRITER_AUTOCHECKPOINT_BYTES,
} from './store/sqlite/index.js';

/** What opening the store starts, for the gateway to stop (the store last). */
export interface BackendParts {
  /** The embedded store, when the gateway runs on it (not on PostgreSQL). */
  store?: Store;
  checkpointer?: Checkpointer;
  pool?: pg.Pool;
  clockSkew?: ClockSkewWatch;
}

/** How often a node on PostgreSQL compares its clock with the database's. */
const CLOCK_SKEW_EVERY_MS = 60_000;

/**
 * Watches this node's clock against the database's, which decides every expiry and lease on a
 * shared store: a skew past the bound is logged at start and whenever it appears again.
 */
async function watchSkew(
  postgres: typeof import('./store/postgres/index.js'),
  pool: pg.Pool,
  log: Logger,
  clock: Clock,
): Promise<ClockSkewWatch> {
  let warned = false;
  return postgres.watchClockSkew(pool, {
    clock,
    everyMs: CLOCK_SKEW_EVERY_MS,
    onSkew(skewMs) {
      const off = Math.abs(skewMs) > postgres.CLOCK_SKEW_WARN_MS;
      if (off && !warned)
        log.warn(
          { skewMs, boundMs: postgres.CLOCK_SKEW_WARN_MS },
          "this node's clock differs from the database's; expiry and leases follow the database's",
        );
      warned = off;
    },
  });
}

/** What PostgreSQL being out of reach is told through: pgReach. */
export interface PgReach {
  /** A connection failed for want of the server (`what`: which). */
  failed(err: unknown, what: string): void;
  /** A connection was made. */
  back(): void;
}

/**
 * One line when PostgreSQL goes out of reach and one when a connection is made again, with how
 * long it was out and how many failures it stands for: the notification connection tries again
 * every second, and each try was a warning with its stack (docs/scale.md#failure-behaviour).
 */
export function pgReach(log: Logger): PgReach {
  let since: number | undefined;
  let failures = 0;
  return {
    failed(err, what) {
      failures++;
      if (since !== undefined) return;
      since = Date.now();
      const cause = causeOf(err);
      log.error(
        { cause, what },
        'PostgreSQL is out of reach; its failures are counted until a connection is made again',
      );
    },
    back() {
      if (since === undefined) return;
      log.info({ outageMs: Date.now() - since, failures }, 'PostgreSQL is reachable again');
      since = undefined;
      failures = 0;
    },
  };
}

/**
 * The store the gateway runs on: the embedded SQLite file (the default), or PostgreSQL, whose
 * schema is brought up to date first (under a lock: nodes may start together, docs/scale.md).
 */
export async function openBackend(
  config: Config,
  parts: BackendParts,
  log: Logger,
  clock: Clock,
): Promise<StoreBackend> {
  if (config.storage.kind === 'postgres') {
    // pg costs about 50 ms to load: only a gateway on PostgreSQL pays.
    const postgres = await import('./store/postgres/index.js');
    const id = `${process.pid}:${randomUUID().slice(0, 8)}`;
    const node = `${hostname()}:${id}`;
    // Its connections are named by the node in pg_stat_activity, its pid and id first: PostgreSQL
    // keeps 63 bytes of a name, which a long host name would otherwise fill.
    const pool = postgres.createPgPool(config.storage.url as string, {
      max: config.storage.poolSize,
      applicationName: `hookd ${id} ${hostname()}`,
    });
    parts.pool = pool;
    const reach = pgReach(log);
    // An idle connection the server closed (a restart, a failover): the pool makes a new one.
    pool.on('error', (err) =>
      isStoreUnavailable(err)
        ? reach.failed(err, 'idle connection')
        : log.warn({ err }, 'an idle PostgreSQL connection failed'),
    );
    pool.on('connect', () => reach.back());
    // The pool is ended with the other parts when the start fails.
    await postgres.migratePostgres(pool).catch((err: unknown) => {
      throw postgres.startProblem(err, config.storage.url as string);
    });
    const room = await postgres.connectionRoomWarning(pool, config.storage.poolSize, pool.totalCount);
    if (room) log.warn(room);
    parts.clockSkew = await watchSkew(postgres, pool, log, clock);
    const share = {
      node,
      leaseMs: config.storage.leaseSeconds * 1000,
      onListenError: (err: Error) =>
        isStoreUnavailable(err)
          ? reach.failed(err, 'notification connection')
          : log.warn({ err }, 'the PostgreSQL notification connection failed; listening again'),
    };
    return postgres.pgBackend(pool, share, clock.now);
  }
  const onDisk = config.storage.path !== ':memory:';
  const onError = (message: string) => log.error({ error: message }, 'background WAL checkpoint failed');
  const store = createStore({
    path: config.storage.path,
    synchronous: config.storage.synchronous,
    bodySegmentBytes: bodySegmentBytesFor(config.hooks.log.maxBytes),
    ...(onDisk
      ? {
          autocheckpointBytes: WRITER_AUTOCHECKPOINT_BYTES,
          onAutoVacuum: (event: AutoVacuumEvent) => logAutoVacuum(log, event),
          // The checkpoint thread (a worker of its own, about 5 MB) starts with the first write:
          // a gateway that takes no request never pays for it.
          onFirstWrite: () => {
            parts.checkpointer ??= startCheckpointer({ path: config.storage.path, onError, writer: store.db });
          },
        }
      : {}),
  });
  parts.store = store;
  if (onDisk) warnIfShared(log, config.storage.path);
  return sqliteBackend(store, clock.now);
}

/**
 * Warns when other local users could plant files that hookd opens (docs/security.md): the
 * database's folder or the request log's body folder beside it is writable by them or owned by
 * one of them, or a folder above is one they can write to without the sticky bit (they could
 * move the data folder away and put their own in its place). Not refused: a container's volume
 * may be so on purpose.
 */
function warnIfShared(log: Logger, path: string): void {
  const own = (uid: number) => uid === process.getuid?.() || uid === 0;
  for (const folder of [dirname(path), `${path}-bodies`]) {
    const stat = statOf(folder);
    if (!stat) continue;
    const mode = (stat.mode & 0o7777).toString(8).padStart(4, '0');
    if ((stat.mode & 0o022) !== 0)
      log.warn(
        { folder, mode },
        'other users can write to this data folder and plant files in it that hookd opens: chmod 700 it',
      );
    if (!own(stat.uid))
      log.warn(
        { folder, uid: stat.uid },
        "this data folder belongs to another user, who can plant files in it that hookd opens: chown it to hookd's user",
      );
  }
  for (let above = dirname(dirname(path)); ; above = dirname(above)) {
    const stat = statOf(above);
    // The sticky bit (/tmp) keeps others from moving or deleting what is not theirs.
    if (stat && (((stat.mode & 0o022) !== 0 && (stat.mode & 0o1000) === 0) || !own(stat.uid)))
      log.warn(
        { folder: above, mode: (stat.mode & 0o7777).toString(8).padStart(4, '0'), uid: stat.uid },
        'another user can replace the data folder inside this folder with one of their own: make it writable by its owner alone, or set its sticky bit',
      );
    if (dirname(above) === above) break;
  }
}

function statOf(folder: string): Stats | undefined {
  try {
    return statSync(folder);
  } catch {
    return undefined;
  }
}

/** The one-time rewrite of a database file made before it gave free pages back (docs/operations.md#retention). */
function logAutoVacuum(log: Logger, event: AutoVacuumEvent): void {
  if (event.phase === 'start')
    log.info({ bytes: event.bytes }, 'rewriting the database file once so that it gives pruned pages back');
  else if (event.phase === 'done') log.info({ ms: event.ms, bytes: event.bytes }, 'database file rewritten');
  else
    log.warn(
      { err: event.err },
      'rewriting the database file failed (it stays as it was: pruned pages are reused, not given back)',
    );
}
