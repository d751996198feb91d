// `npm run bench:pg-driver`: node-postgres (`pg`) beside postgres.js (`postgres`) on a private
// PostgreSQL cluster, in the shapes the PostgreSQL store needs (docs/scale.md): a round trip, a
// group commit of 50 two-kilobyte rows, and a run claimed with FOR UPDATE SKIP LOCKED. It
// reports wall time and this process's CPU per operation (the gateway's share), as ratios
// within one run; the cluster is durable (fsync on) like a user's.
import pg from 'pg';
import postgres from 'postgres';
import { startPgCluster } from '../test/helpers/postgres.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const ROWS = Number(process.env.BENCH_PG_ROWS ?? 20_000);
const BATCH = 50;
const TRIPS = 5_000;
const CLAIMS = 5_000;
const body = 'lorem ipsum dolor sit amet '.repeat(80).slice(0, 2048);

const SCHEMA = `
  DROP TABLE IF EXISTS bench_rows;
  CREATE TABLE bench_rows (seq BIGSERIAL PRIMARY KEY, id TEXT NOT NULL UNIQUE, body TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'queued', lease_until BIGINT);
  CREATE INDEX bench_rows_status ON bench_rows (status, seq);`;

interface Measure {
  wallUs: number;
  cpuUs: number;
}

async function measure(count: number, fn: () => Promise<void>): Promise<Measure> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  await fn();
  const wall = performance.now() - started;
  const used = process.cpuUsage(cpu);
  return { wallUs: (wall * 1000) / count, cpuUs: (used.user + used.system) / count };
}

interface Driver {
  name: string;
  setup(): Promise<void>;
  roundTrip(i: number): Promise<void>;
  groupCommit(ids: string[]): Promise<void>;
  claim(): Promise<void>;
  close(): Promise<void>;
}

function nodePostgres(url: string): Driver {
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  return {
    name: 'pg 8.23.1',
    async setup() {
      await pool.query(SCHEMA);
    },
    async roundTrip(i) {
      await pool.query({ name: 'trip', text: 'SELECT $1::int AS n', values: [i] });
    },
    async groupCommit(ids) {
      // One statement for the batch: pg sends one query at a time on a connection.
      await pool.query({
        name: 'batch',
        text: 'INSERT INTO bench_rows (id, body) SELECT * FROM unnest($1::text[], $2::text[])',
        values: [ids, ids.map(() => body)],
      });
    },
    async claim() {
      await pool.query({
        name: 'claim',
        text: `UPDATE bench_rows SET status = 'running', lease_until = $1 WHERE seq = (
                 SELECT seq FROM bench_rows WHERE status = 'queued' ORDER BY seq LIMIT 1 FOR UPDATE SKIP LOCKED)
               RETURNING id`,
        values: [Date.now() + 30_000],
      });
    },
    close: () => pool.end(),
  };
}

function postgresJs(url: string): Driver {
  const sql = postgres(url, { max: 4, onnotice: () => undefined });
  return {
    name: 'postgres 3.4.9',
    async setup() {
      await sql.unsafe(SCHEMA);
    },
    async roundTrip(i) {
      await sql`SELECT ${i}::int AS n`;
    },
    async groupCommit(ids) {
      // The same statement as pg's (postgres.js's own sql(rows) helper, 100 parameters, cost 2.2×
      // pg's CPU per row in a trial run).
      const bodies = ids.map(() => body);
      await sql`INSERT INTO bench_rows (id, body) SELECT * FROM unnest(${sql.array(ids)}::text[], ${sql.array(bodies)}::text[])`;
    },
    async claim() {
      await sql`UPDATE bench_rows SET status = 'running', lease_until = ${Date.now() + 30_000} WHERE seq = (
                  SELECT seq FROM bench_rows WHERE status = 'queued' ORDER BY seq LIMIT 1 FOR UPDATE SKIP LOCKED)
                RETURNING id`;
    },
    close: () => sql.end(),
  };
}

async function scenarioSet(driver: Driver, round: number): Promise<Record<string, Measure>> {
  await driver.setup();
  const trips = await measure(TRIPS, async () => {
    for (let i = 0; i < TRIPS; i++) await driver.roundTrip(i);
  });
  // Four batches in flight at once, as a gateway's group commits overlap their round trips.
  let next = 0;
  const commits = await measure(ROWS, async () => {
    const worker = async () => {
      while (next < ROWS) {
        const start = next;
        next += BATCH;
        await driver.groupCommit(Array.from({ length: BATCH }, (_, i) => `r${round}-${start + i}`));
      }
    };
    await Promise.all([worker(), worker(), worker(), worker()]);
  });
  let claimed = 0;
  const claims = await measure(CLAIMS, async () => {
    const worker = async () => {
      while (claimed < CLAIMS) {
        claimed++;
        await driver.claim();
      }
    };
    await Promise.all([worker(), worker(), worker(), worker()]);
  });
  return { 'round trip': trips, 'group commit, per row': commits, 'claim (SKIP LOCKED)': claims };
}

async function main(): Promise<void> {
  const cluster = await startPgCluster({ throwaway: false });
  try {
    const results: Record<string, Record<string, Measure[]>> = {};
    for (let round = 0; round < ROUNDS; round++) {
      const drivers = [nodePostgres(cluster.url), postgresJs(cluster.url)];
      // Alternate which goes first: the machine's speed drifts within a round.
      if (round % 2 === 1) drivers.reverse();
      for (const driver of drivers) {
        const set = await scenarioSet(driver, round);
        for (const [scenario, m] of Object.entries(set)) {
          results[scenario] ??= {};
          const byDriver = results[scenario] as Record<string, Measure[]>;
          byDriver[driver.name] = [...(byDriver[driver.name] ?? []), m];
        }
        await driver.close();
      }
    }
    const median = (list: Measure[], key: keyof Measure) =>
      [...list].sort((a, b) => a[key] - b[key])[Math.floor(list.length / 2)]?.[key] ?? 0;
    const lines = ['| operation | driver | wall µs | client CPU µs | CPU vs pg |', '|---|---|---:|---:|---:|'];
    for (const [scenario, byDriver] of Object.entries(results)) {
      const pgCpu = median(byDriver['pg 8.23.1'] ?? [], 'cpuUs');
      for (const [name, list] of Object.entries(byDriver)) {
        const cpu = median(list, 'cpuUs');
        lines.push(
          `| ${scenario} | ${name} | ${median(list, 'wallUs').toFixed(1)} | ${cpu.toFixed(1)} | ${(cpu / pgCpu).toFixed(2)}× |`,
        );
      }
    }
    console.log(lines.join('\n'));
  } finally {
    await cluster.stop();
  }
}

await main();
