import pg from 'pg';
import { hookdError } from '../../errors.js';
import { isStoreUnavailable } from '../unavailable.js';
import { pgMigrations } from './schema.js';

/** What `hookd check` says of a PostgreSQL URL: problems stop `serve`, warnings do not. */
export interface PgDiagnosis {
  readonly problems: readonly string[];
  readonly warnings: readonly string[];
}

/** Query parameters of a connection URL that carry a secret (libpq's, which pg reads too). */
const SECRET_PARAMS = ['password', 'sslpassword'];

/** The URL as it may be shown: without its password, in the user part or as `?password=`. */
export function withoutPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    for (const name of SECRET_PARAMS) if (parsed.searchParams.has(name)) parsed.searchParams.set(name, '***');
    return parsed.toString();
  } catch {
    return '(an unparsable URL)';
  }
}

/** What a connection error means, in words a person can act on. */
function connectionProblem(err: unknown, url: string): string {
  const { code, message } = err as { code?: string; message?: string };
  const shown = withoutPassword(url);
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EHOSTUNREACH' || code === 'ETIMEDOUT')
    return `storage.url: cannot connect to ${shown} (${code}): is PostgreSQL running there and listening on that port?`;
  if (/timeout exceeded when trying to connect/.test(message ?? ''))
    return `storage.url: ${shown} took longer than 5 s to accept a connection: is the host reachable (a firewall dropping packets), and the server not stalled?`;
  if (code === '28P01' || code === '28000')
    return `storage.url: the server refused the user or password of ${shown} (${message})`;
  if (code === '3D000') return `storage.url: ${message}: create it first (createdb), or fix the name in ${shown}`;
  return `storage.url: cannot use ${shown}: ${message ?? String(err)}`;
}

/** SQLSTATEs of a start that could not connect or log in: a refused login, no such database, too many connections, a server starting or shutting down. */
const START_REFUSED = /^(28|3D|53300|57P0[1-3])/;

/**
 * The error `hookd serve` stops with when its database cannot be used at start: what `hookd
 * check` says of it (`storage.url: cannot connect to postgres://hookd:***@…`), not pg's bare
 * `connect ECONNREFUSED`; any other error as it is.
 */
export function startProblem(err: unknown, url: string): unknown {
  const code = (err as { code?: unknown } | undefined)?.code;
  const reached = typeof code === 'string' && START_REFUSED.test(code);
  if (!reached && !isStoreUnavailable(err)) return err;
  return hookdError('CONFIG_PROBLEM', { problem: connectionProblem(err, url) }, { cause: err });
}

/**
 * A warning when the server's `max_connections` leaves this node less room than `poolSize`
 * connections (counting the `held` ones it has): the queries that find none fail with `too many
 * clients`, answered 503, while the other nodes are served (docs/scale.md#topology). A role that
 * is no superuser sees other roles' sessions without their `backend_type`: a session is counted
 * by its database.
 */
export async function connectionRoomWarning(
  db: pg.Pool | pg.ClientBase,
  poolSize: number,
  held: number,
): Promise<string | undefined> {
  const { rows } = await db.query<{ max: number; reserved: number; used: number }>(
    `SELECT current_setting('max_connections')::int AS max,
            current_setting('superuser_reserved_connections')::int
              + COALESCE(NULLIF(current_setting('reserved_connections', true), '')::int, 0) AS reserved,
            (SELECT count(*)::int FROM pg_stat_activity
              WHERE datid IS NOT NULL AND COALESCE(backend_type, 'client backend') = 'client backend') AS used`,
  );
  const row = rows[0];
  if (!row) return undefined;
  const room = row.max - row.reserved - row.used + held;
  if (room >= poolSize) return undefined;
  return `storage.poolSize: PostgreSQL allows ${row.max} connections (${row.reserved} reserved) and ${row.used} are in use: this node's pool of ${poolSize} may get only ${Math.max(room, 0)}, and requests that find none are answered 503 STORE_UNAVAILABLE; lower storage.poolSize on every node, or raise max_connections`;
}

/**
 * Connects to the database `hookd serve` would use and says what would stop it: an unreachable
 * server, a refused login, a missing database, a schema written by a newer hookd, or (before the
 * first start) no right to create the schema.
 */
export async function diagnosePostgres(url: string, poolSize: number, timeoutMs = 5000): Promise<PgDiagnosis> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs });
  try {
    await client.connect();
  } catch (err) {
    return { problems: [connectionProblem(err, url)], warnings: [] };
  }
  try {
    const { rows: present } = await client.query<{ found: boolean }>(
      "SELECT to_regclass('hookd_schema') IS NOT NULL AS found",
    );
    const version = present[0]?.found
      ? ((await client.query<{ version: number }>('SELECT version FROM hookd_schema LIMIT 1')).rows[0]?.version ?? 0)
      : null;
    if (version !== null && version > pgMigrations.length)
      return {
        problems: [
          `storage.url: the database was written by a newer hookd (schema ${version}, this one knows ${pgMigrations.length})`,
        ],
        warnings: [],
      };
    const room = await connectionRoomWarning(client, poolSize, 1);
    const roomWarnings = room ? [room] : [];
    if (version === pgMigrations.length) return { problems: [], warnings: roomWarnings };
    const { rows: rights } = await client.query<{ create: boolean; user: string }>(
      "SELECT has_schema_privilege(current_schema(), 'CREATE') AS create, current_user AS user",
    );
    if (!rights[0]?.create)
      return {
        problems: [
          `storage.url: user ${rights[0]?.user} may not create tables in the database's schema (GRANT CREATE ON SCHEMA ... TO ${rights[0]?.user}, or use the owner)`,
        ],
        warnings: [],
      };
    const from = version ?? 0;
    return {
      problems: [],
      warnings: [
        `storage.url: the schema is at version ${from} of ${pgMigrations.length}; serve brings it up to date`,
        ...roomWarnings,
      ],
    };
  } catch (err) {
    return { problems: [connectionProblem(err, url)], warnings: [] };
  } finally {
    await client.end().catch(() => undefined);
  }
}
