// docs/transforms.md#limits in figures: ingress beside spinning transforms and executing runs, the CPU of one
// executed run, and RSS over five soak rounds whose runs drained.
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { request } from 'undici';
import { cpuUs, HOOK_HEADERS, load, median, rssMb, sleep } from './lib.js';

/** A gateway the bench started on a fresh data folder, its model answering or stalled. */
export interface BenchGateway {
  readonly child: ChildProcess;
  readonly port: number;
  readonly dir: string;
}

export interface IsolationOptions {
  /** Starts a fresh gateway whose model answers at once, or never (`stalled`: runs stay paused). */
  start(model: 'answering' | 'stalled'): Promise<BenchGateway>;
  stop(gateway: BenchGateway): Promise<void>;
  readonly agentBody: string;
  readonly durationS: number;
  readonly soakRequests: number;
  /** Interleaved pairs of the spinning scenario (3). */
  readonly spinRounds: number;
  /** Interleaved pairs of the runs scenario, paused then executing (9). */
  readonly runsRounds: number;
}

/** Runs not yet summarised, read from the gateway's own database. */
export function unfinishedRuns(gateway: BenchGateway): { total: number; unfinished: number } {
  const db = new Database(join(gateway.dir, 'data/hookd.db'), { readonly: true, fileMustExist: true });
  try {
    return db.prepare('SELECT count(*) AS total, count(*) - count(summarized_at) AS unfinished FROM runs').get() as {
      total: number;
      unfinished: number;
    };
  } finally {
    db.close();
  }
}

/** Waits until every run is summarised (or `maxS` passes); returns the seconds it took. */
export async function drain(gateway: BenchGateway, maxS: number): Promise<number> {
  const started = performance.now();
  while (unfinishedRuns(gateway).unfinished > 0 && performance.now() - started < maxS * 1000) await sleep(250);
  return (performance.now() - started) / 1000;
}

/**
 * `/hooks/agent` alone, then with 4 clients hitting a transform that spins 900 ms (its p99 ≤ 2×):
 * `rounds` interleaved pairs, the median p99 of each side (one 4 s p99 swings with the machine).
 */
async function spinning(options: IsolationOptions) {
  const gateway = await options.start('stalled');
  const pid = gateway.child.pid as number;
  try {
    await load(gateway.port, pid, '/hooks/agent', options.agentBody, { duration: 1 });
    let spins = 0;
    const statuses = new Map<number, number>();
    const spinWhile = async (running: () => boolean) => {
      while (running()) {
        const res = await request(`http://127.0.0.1:${gateway.port}/hooks/spin`, {
          method: 'POST',
          headers: HOOK_HEADERS,
          body: JSON.stringify({ ms: 900 }),
        });
        await res.body.dump();
        spins++;
        statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
      }
    };
    const plainP99Ms: number[] = [];
    const loadedP99Ms: number[] = [];
    for (let round = 0; round < options.spinRounds; round++) {
      const plain = await load(gateway.port, pid, '/hooks/agent', options.agentBody, { duration: options.durationS });
      plainP99Ms.push(plain.latency.p99);
      let stop = false;
      const clients = Array.from({ length: 4 }, () => spinWhile(() => !stop));
      await sleep(500);
      const loaded = await load(gateway.port, pid, '/hooks/agent', options.agentBody, { duration: options.durationS });
      loadedP99Ms.push(loaded.latency.p99);
      stop = true;
      await Promise.all(clients);
    }
    return {
      plainP99Ms,
      loadedP99Ms,
      plainP99: median(plainP99Ms),
      loadedP99: median(loadedP99Ms),
      spins,
      spinStatuses: Object.fromEntries(statuses),
    };
  } finally {
    await options.stop(gateway);
  }
}

/**
 * `/hooks/agent` with its runs paused (the model never answers) and executing (the model answers
 * at once): `rounds` interleaved pairs, each on fresh gateways, and the median of their ratios
 * (one 4 s pair swings with the machine: 75–112 % in six pairs with both sides paused). After
 * the last pair, the drain of the runs left: the gateway CPU one executed run costs.
 */
async function runsExecuting(options: IsolationOptions) {
  const measure = async (model: 'answering' | 'stalled', drainAfter: boolean) => {
    const gateway = await options.start(model);
    try {
      const pid = gateway.child.pid as number;
      await load(gateway.port, pid, '/hooks/agent', options.agentBody, { duration: 1 });
      const result = await load(gateway.port, pid, '/hooks/agent', options.agentBody, { duration: options.durationS });
      if (!drainAfter) return { result, runCpuUs: 0, drained: 0 };
      // The runs left after the load execute with no ingress: their CPU is the runs' alone.
      const before = unfinishedRuns(gateway).unfinished;
      const cpuBefore = cpuUs(pid);
      await drain(gateway, 60);
      const drained = before - unfinishedRuns(gateway).unfinished;
      return { result, runCpuUs: drained > 0 ? (cpuUs(pid) - cpuBefore) / drained : 0, drained };
    } finally {
      await options.stop(gateway);
    }
  };
  const pausedRps: number[] = [];
  const executingRps: number[] = [];
  let last = { runCpuUs: 0, drained: 0 };
  for (let round = 0; round < options.runsRounds; round++) {
    pausedRps.push((await measure('stalled', false)).result.requests.average);
    const executing = await measure('answering', round === options.runsRounds - 1);
    executingRps.push(executing.result.requests.average);
    last = executing;
  }
  const ratios = executingRps.map((rps, i) => rps / (pausedRps[i] ?? rps));
  return { pausedRps, executingRps, ratio: median(ratios), runCpuUs: last.runCpuUs, drained: last.drained };
}

/**
 * RSS plateaus: five rounds of `soakRounds` agent requests, each followed by its runs drained;
 * RSS after each round. A healthy heap reaches its working size in the first round and stays
 * there (the target: after the fifth ≤ 1.15× after the first); a leak grows every round.
 */
async function soak(options: IsolationOptions) {
  const gateway = await options.start('answering');
  try {
    const pid = gateway.child.pid as number;
    await sleep(500);
    const idleMb = rssMb(pid);
    const rounds: { rssMb: number; loadS: number; drainS: number }[] = [];
    for (let round = 0; round < 5; round++) {
      const started = performance.now();
      await load(gateway.port, pid, '/hooks/agent', options.agentBody, { amount: options.soakRequests });
      const loadS = (performance.now() - started) / 1000;
      const drainS = await drain(gateway, 600);
      rounds.push({ rssMb: rssMb(pid), loadS, drainS });
    }
    const { total, unfinished } = unfinishedRuns(gateway);
    return { idleMb, rounds, runs: total, unfinished };
  } finally {
    await options.stop(gateway);
  }
}

export async function measureIsolation(options: IsolationOptions) {
  return { spinning: await spinning(options), runs: await runsExecuting(options), soak: await soak(options) };
}
