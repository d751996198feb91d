import { execFileSync, spawn } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A private PostgreSQL cluster for tests and benches (Debian's `postgresql`, which .ci/run
 * installs): `initdb` in a temp folder, a server on a loopback port with password
 * authentication, torn down by `stop`. PostgreSQL refuses to run as root, so under root the
 * server runs as the unprivileged `postgres` user the package creates.
 */
export interface PgCluster {
  /** `postgres://hookd:<password>@127.0.0.1:<port>/hookd`. */
  readonly url: string;
  readonly port: number;
  readonly password: string;
  /** The server's folder (data and socket). */
  readonly dir: string;
  /** Stops the server, keeping its data: clients see a database out of reach until `resume`. */
  pause(): Promise<void>;
  /** Starts the paused server again on the same port. */
  resume(): Promise<void>;
  /**
   * Freezes the server and every backend (SIGSTOP), as a paused VM or a hung host does: its
   * connections stay open and take bytes, nothing answers, until `thaw`.
   */
  freeze(): void;
  /** Lets the frozen server go on (SIGCONT): it reads what was sent meanwhile and answers. */
  thaw(): void;
  stop(): Promise<void>;
}

export interface PgClusterOptions {
  /** `fsync` and `synchronous_commit` off: fast, and fine for data a test throws away (default true). */
  readonly throwaway?: boolean;
  /** The server's `max_connections` (default 200). */
  readonly maxConnections?: number;
}

/** The newest installed server's bin folder, or undefined. */
export function postgresBin(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin/initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : join(root, versions[0], 'bin');
}

// Like Dovecot and Chromium: without PostgreSQL these tests are skipped (and say so), except
// under CI, where a missing server fails them.
const bin = postgresBin();
if (!bin && !process.env.CI)
  console.warn('PostgreSQL tests skipped: no /usr/lib/postgresql/*/bin/initdb (apt-get install postgresql)');
/** Whether the PostgreSQL tests run here. */
export const postgresTestsRun = bin !== undefined || Boolean(process.env.CI);

/** Who the server runs as: ourselves, or under root the package's `postgres` user. */
function serverUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
  return { uid, gid };
}

function run(file: string, args: string[], user: { uid: number; gid: number } | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'], ...(user ?? {}) });
    let output = '';
    child.stdout.on('data', (c: Buffer) => {
      output += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      output += c.toString();
    });
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`${file} ${args.join(' ')} exited ${code}: ${output}`)),
    );
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** Creates and starts a cluster with a `hookd` superuser and database. */
export async function startPgCluster(options: PgClusterOptions = {}): Promise<PgCluster> {
  if (!bin) throw new Error('PostgreSQL is not installed: apt-get install postgresql');
  const user = serverUser();
  const dir = mkdtempSync(join(tmpdir(), 'hookd-pg-'));
  if (user) chownSync(dir, user.uid, user.gid);
  chmodSync(dir, 0o700);
  const data = join(dir, 'data');
  const password = `pw-${Math.random().toString(36).slice(2)}`;
  const pwfile = join(dir, 'pwfile');
  writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
  if (user) chownSync(pwfile, user.uid, user.gid);
  await run(
    join(bin, 'initdb'),
    ['-D', data, '-U', 'hookd', `--pwfile=${pwfile}`, '--auth-host=scram-sha-256', '--auth-local=trust', '-E', 'UTF8'],
    user,
  );
  rmSync(pwfile);
  const throwaway = options.throwaway ?? true;
  const settings = [
    'listen_addresses=127.0.0.1',
    `unix_socket_directories=${dir}`,
    `max_connections=${options.maxConnections ?? 200}`,
    ...(throwaway ? ['fsync=off', 'synchronous_commit=off', 'full_page_writes=off'] : []),
  ];
  let port = 0;
  const pgCtl = join(bin, 'pg_ctl');
  const startServer = () =>
    run(
      pgCtl,
      [
        '-D',
        data,
        '-l',
        join(dir, 'server.log'),
        '-o',
        [`-p ${port}`, ...settings.map((s) => `-c ${s}`)].join(' '),
        '-w',
        'start',
      ],
      user,
    );
  for (let attempt = 0; ; attempt++) {
    port = await freePort();
    try {
      await startServer();
      break;
    } catch (err) {
      // Another process took the port between the probe and the start: try another.
      if (attempt >= 3) throw err;
    }
  }
  await run(join(bin, 'createdb'), ['-h', dir, '-p', String(port), '-U', 'hookd', 'hookd'], user);
  return {
    url: `postgres://hookd:${password}@127.0.0.1:${port}/hookd`,
    port,
    password,
    dir,
    pause: () => run(pgCtl, ['-D', data, '-m', 'fast', '-w', 'stop'], user),
    freeze: () => signalServer(data, 'SIGSTOP'),
    thaw: () => signalServer(data, 'SIGCONT'),
    resume: startServer,
    async stop() {
      await run(pgCtl, ['-D', data, '-m', 'immediate', '-w', 'stop'], user).catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Sends `signal` to the server of `data` (its pid is postmaster.pid's first line) and to its backends. */
function signalServer(data: string, signal: 'SIGSTOP' | 'SIGCONT'): void {
  const postmaster = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const children = readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        // `pid (name) state ppid …`: the name may hold spaces, so the fields are read after its `)`.
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === postmaster;
      } catch {
        return false; // ended meanwhile
      }
    })
    .map(Number);
  // Stopped first, so that it starts no backend the loop below would miss; let go last.
  const pids = signal === 'SIGSTOP' ? [postmaster, ...children] : [...children, postmaster];
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch (err) {
      // A backend that ended since /proc was read (its client went away): nothing to stop.
      if ((err as NodeJS.ErrnoException).code !== 'ESRCH' || pid === postmaster) throw err;
    }
  }
}

/** The stores an end-to-end suite runs on: SQLite always, PostgreSQL where its tests run. */
export const suiteStores: readonly ('sqlite' | 'postgres')[] = postgresTestsRun ? ['sqlite', 'postgres'] : ['sqlite'];

/** The `storage` config of a suite's gateways, on one store kind. */
export interface SuiteStore {
  readonly kind: 'sqlite' | 'postgres';
  /**
   * The storage for the gateway(s) of `key`: the same key gets the same database (a restart),
   * another key a fresh one. On SQLite, the default file in the gateway's folder.
   */
  storage(key: string): Promise<Record<string, unknown>>;
  stop(): Promise<void>;
}

/** Lease of the suite's PostgreSQL gateways: a gateway killed by a test is taken over in 2 s. */
const SUITE_LEASE_SECONDS = 2;

/** A suite's store: on PostgreSQL one cluster, started on first use, with a database per key. */
export function suiteStore(kind: 'sqlite' | 'postgres'): SuiteStore {
  let cluster: Promise<PgCluster> | undefined;
  const databases = new Map<string, Promise<string>>();
  return {
    kind,
    async storage(key) {
      if (kind === 'sqlite') return {};
      cluster ??= startPgCluster();
      const started = await cluster;
      let url = databases.get(key);
      if (!url) {
        const name = `suite_${databases.size + 1}`;
        url = run(
          join(bin as string, 'createdb'),
          ['-h', started.dir, '-p', String(started.port), '-U', 'hookd', name],
          serverUser(),
        ).then(() => started.url.replace(/\/hookd$/, `/${name}`));
        databases.set(key, url);
      }
      return { kind: 'postgres', url: await url, leaseSeconds: SUITE_LEASE_SECONDS };
    },
    async stop() {
      await (await cluster)?.stop();
    },
  };
}
