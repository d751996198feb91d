// docs/scale.md in figures: `/hooks/agent` on one node on SQLite, one node on PostgreSQL and two
// nodes on one PostgreSQL, interleaved rounds in the same run. The cluster is durable (fsync and
// synchronous_commit on, as a production server runs), and every node is on this machine.
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import { startPgCluster } from '../test/helpers/postgres.js';
import { CONNECTIONS, cpuUs, HOOK_HEADERS } from './lib.js';

/** A gateway the bench started; `storage` is the config's `storage` block. */
export interface ScaleNode {
  readonly child: ChildProcess;
  readonly port: number;
}

export interface ScaleOptions {
  /** Starts a gateway on `storage` (`{}`: SQLite in a fresh folder), its model stalled. */
  start(storage: Record<string, unknown>): Promise<ScaleNode>;
  stop(node: ScaleNode): Promise<void>;
  readonly agentBody: string;
  readonly durationS: number;
  readonly rounds: number;
}

export interface ScaleResult {
  readonly reqPerSec: number;
  readonly p99Ms: number;
  readonly non2xx: number;
  /** Every node's CPU (all threads) over the load ÷ answers; the PostgreSQL server's apart. */
  readonly cpuUsPerAnswer: number;
  readonly serverCpuUsPerAnswer: number;
}

export type ScaleSetup = 'one node on SQLite' | 'one node on PostgreSQL' | 'two nodes on PostgreSQL';

/** The PostgreSQL server's processes' CPU so far (the postmaster and its backends), in µs. */
function serverCpuUs(postmasterPid: number): number {
  const children = (pid: number): number[] => {
    try {
      return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
    } catch {
      return [];
    }
  };
  let total = 0;
  for (const pid of [postmasterPid, ...children(postmasterPid)]) {
    try {
      total += cpuUs(pid);
    } catch {
      // A backend that ended between the listing and the read.
    }
  }
  return total;
}

/** Loads every node at once, the connections split between them; sums what they answered. */
async function loadNodes(nodes: readonly ScaleNode[], body: string, durationS: number, postmaster?: number) {
  const before = nodes.map((n) => cpuUs(n.child.pid as number));
  const serverBefore = postmaster ? serverCpuUs(postmaster) : 0;
  const results = await Promise.all(
    nodes.map((n) =>
      autocannon({
        url: `http://127.0.0.1:${n.port}/hooks/agent`,
        method: 'POST',
        connections: Math.ceil(CONNECTIONS / nodes.length),
        headers: HOOK_HEADERS,
        body,
        duration: durationS,
      }),
    ),
  );
  const cpu = nodes.reduce((sum, n, i) => sum + cpuUs(n.child.pid as number) - (before[i] as number), 0);
  const serverCpu = postmaster ? serverCpuUs(postmaster) - serverBefore : 0;
  const answers = Math.max(
    1,
    results.reduce((sum, r) => sum + r.requests.total - r.errors - r.timeouts, 0),
  );
  return {
    reqPerSec: results.reduce((sum, r) => sum + r.requests.average, 0),
    p99Ms: Math.max(...results.map((r) => r.latency.p99)),
    non2xx: results.reduce((sum, r) => sum + r.non2xx, 0),
    cpuUsPerAnswer: cpu / answers,
    serverCpuUsPerAnswer: serverCpu / answers,
  };
}

/** The three setups, `rounds` interleaved rounds each, the median round of each. */
export async function measureScale(options: ScaleOptions): Promise<Record<ScaleSetup, ScaleResult>> {
  const cluster = await startPgCluster({ throwaway: false });
  const pool = new pg.Pool({ connectionString: cluster.url, max: 1 });
  const postmaster = Number(readFileSync(join(cluster.dir, 'data/postmaster.pid'), 'utf8').split('\n')[0]);
  const postgres = { kind: 'postgres', url: cluster.url };
  const setups: { name: ScaleSetup; storage: Record<string, unknown>; nodes: number }[] = [
    { name: 'one node on SQLite', storage: {}, nodes: 1 },
    { name: 'one node on PostgreSQL', storage: postgres, nodes: 1 },
    { name: 'two nodes on PostgreSQL', storage: postgres, nodes: 2 },
  ];
  const rounds: Partial<Record<ScaleSetup, ScaleResult[]>> = {};
  try {
    for (let round = 0; round < options.rounds; round++) {
      for (let i = 0; i < setups.length; i++) {
        const setup = setups[(i + round) % setups.length] as (typeof setups)[number];
        // Every setup starts on an empty database, like the SQLite one on a fresh folder.
        await pool.query('DROP SCHEMA public CASCADE; CREATE SCHEMA public; DROP TABLE IF EXISTS hookd_schema');
        const nodes = await Promise.all(Array.from({ length: setup.nodes }, () => options.start(setup.storage)));
        const pid = setup.storage.kind === 'postgres' ? postmaster : undefined;
        try {
          await loadNodes(nodes, options.agentBody, 1, pid);
          const measured = await loadNodes(nodes, options.agentBody, options.durationS, pid);
          rounds[setup.name] = [...(rounds[setup.name] ?? []), measured];
        } finally {
          await Promise.all(nodes.map((node) => options.stop(node)));
        }
      }
    }
  } finally {
    await pool.end();
    await cluster.stop();
  }
  const median = (list: ScaleResult[]) =>
    [...list].sort((a, b) => a.reqPerSec - b.reqPerSec)[Math.floor(list.length / 2)] as ScaleResult;
  return Object.fromEntries(setups.map((s) => [s.name, median(rounds[s.name] ?? [])])) as Record<
    ScaleSetup,
    ScaleResult
  >;
}
