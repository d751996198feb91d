// `npm run bench -- --quick`: the guard to run before merging a change to the request or commit
// path (docs/performance.md#the-quick-guard). Under 2 minutes: the bare node:http baseline and
// fresh gateways on /hooks/agent with the request log on and off, in interleaved rounds, and the
// CPU of executed runs drained after a load. Every row is a ratio to
// the baseline's CPU per request in the same run; the exit code is 1 when one is more than 15 %
// over its target.
import type { ChildProcess } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agentBody, hookdConfig, ROOT, startHookd } from './gateway.js';
import { drain, unfinishedRuns } from './isolation.js';
import { cpuUs, load, median, startChild } from './lib.js';

const ROUNDS = Number(process.env.BENCH_QUICK_ROUNDS ?? 5);
const DURATION_S = Number(process.env.BENCH_QUICK_DURATION ?? 2);
/** Each fresh gateway's warm-up before it is measured: the JIT settles in about a second. */
const WARM_UP_S = 1;
/** The load whose runs are left to drain. */
const RUN_LOAD_S = 4;
/** How far over its target a row may be before the guard fails. */
const SLACK = 1.15;
/**
 * The baseline's CPU per request in the run the targets set in µs were set (16.5 µs on the 2-core
 * development machine): a target in µs is that many baselines, so that the guard judges ratios.
 */
const TARGET_BASELINE_US = 16.5;

interface Cell {
  readonly name: string;
  readonly path: string;
  readonly body: string;
  readonly logOff?: boolean;
}

const CELLS: readonly Cell[] = [
  { name: 'baseline', path: '/', body: agentBody },
  { name: 'agent', path: '/hooks/agent', body: agentBody },
  { name: 'agent, log off', path: '/hooks/agent', body: agentBody, logOff: true },
];

/** One row of the guard: its figure in µs, as a ratio to the baseline, against its target ratio. */
export interface GuardRow {
  readonly row: string;
  readonly us: number;
  readonly ratio: number;
  readonly target: number;
  readonly over: boolean;
}

/** The guard's rows from each round's CPU µs per cell (paired by round) and the runs' CPU. */
export function guardRows(rounds: readonly Record<string, number>[], runUs: number): GuardRow[] {
  const paired = (of: (r: Record<string, number>) => number) => median(rounds.map((r) => of(r) / (r.baseline ?? 1)));
  const us = (of: (r: Record<string, number>) => number) => median(rounds.map(of));
  const baselineUs = us((r) => r.baseline ?? 0);
  const row = (name: string, figureUs: number, ratio: number, target: number): GuardRow => ({
    row: name,
    us: figureUs,
    ratio,
    target,
    over: ratio > target * SLACK,
  });
  const cell = (name: string) => (r: Record<string, number>) => r[name] ?? 0;
  const log = (r: Record<string, number>) => (r.agent ?? 0) - (r['agent, log off'] ?? 0);
  return [
    row('/hooks/agent', us(cell('agent')), paired(cell('agent')), 2.3),
    row('request log (agent − log off)', us(log), paired(log), 10 / TARGET_BASELINE_US),
    row('an executed run', runUs, runUs / baselineUs, 150 / TARGET_BASELINE_US),
  ];
}

/** The CPU of one executed run: a gateway whose model answers at once, loaded, then its runs left drained. */
async function runCpuUs(dir: string, modelPort: number): Promise<{ us: number; drained: number }> {
  rmSync(join(dir, 'data'), { recursive: true, force: true });
  hookdConfig(dir, modelPort);
  const { child, port } = await startHookd(dir);
  try {
    const pid = child.pid as number;
    // As the full bench's runs row: a warm-up, then 4 s of load, so that tens of thousands of
    // runs are left and what the drain costs besides them (the WAL's last pages copied) is small.
    await load(port, pid, '/hooks/agent', agentBody, { duration: WARM_UP_S });
    await load(port, pid, '/hooks/agent', agentBody, { duration: RUN_LOAD_S });
    const gateway = { child, port, dir };
    const before = unfinishedRuns(gateway).unfinished;
    const cpuBefore = cpuUs(pid);
    await drain(gateway, 60);
    const drained = before - unfinishedRuns(gateway).unfinished;
    return { us: drained > 0 ? (cpuUs(pid) - cpuBefore) / drained : 0, drained };
  } finally {
    await stop(child);
  }
}

async function stop(child: ChildProcess): Promise<void> {
  child.kill('SIGTERM');
  await new Promise((done) => child.once('exit', done));
}

/** One cell of a round on a fresh gateway (or the baseline): its CPU µs per answered request. */
async function cellCpuUs(cell: Cell, dir: string, stalledPort: number, baseline: { port: number; pid: number }) {
  if (cell.name === 'baseline') {
    await load(baseline.port, baseline.pid, cell.path, cell.body, { duration: WARM_UP_S });
    return (await load(baseline.port, baseline.pid, cell.path, cell.body, { duration: DURATION_S })).cpuUsPerAnswer;
  }
  rmSync(join(dir, 'data'), { recursive: true, force: true });
  hookdConfig(dir, stalledPort, 1, !cell.logOff);
  const { child, port } = await startHookd(dir);
  try {
    const pid = child.pid as number;
    await load(port, pid, cell.path, cell.body, { duration: WARM_UP_S });
    const result = await load(port, pid, cell.path, cell.body, { duration: DURATION_S });
    if (result.non2xx > 0) throw new Error(`${cell.name}: ${result.non2xx} answers were not 2xx`);
    return result.cpuUsPerAnswer;
  } finally {
    await stop(child);
  }
}

/** Runs the guard, prints its rows; answers the exit code (1 when a row is over its target by more than 15 %). */
export async function quick(): Promise<number> {
  const started = performance.now();
  const dir = mkdtempSync(join(tmpdir(), 'hookd-bench-quick-'));
  cpSync(join(ROOT, 'bench/transforms'), join(dir, 'transforms'), { recursive: true });
  const model = await startChild(['--import', 'tsx', join(ROOT, 'bench/fake-model.ts')], ROOT);
  const stalled = await startChild(['--import', 'tsx', join(ROOT, 'bench/fake-model.ts')], ROOT, {
    ...process.env,
    BENCH_MODEL_STALL: '1',
  });
  const bare = await startChild([join(ROOT, 'bench/baseline-server.mjs')], ROOT);
  try {
    const baseline = { port: bare.port, pid: bare.child.pid as number };
    const rounds: Record<string, number>[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const figures: Record<string, number> = {};
      // Each round starts one cell later: a drift of the machine's speed moves every cell alike.
      for (let i = 0; i < CELLS.length; i++) {
        const cell = CELLS[(i + round) % CELLS.length] as Cell;
        figures[cell.name] = await cellCpuUs(cell, dir, stalled.port, baseline);
      }
      rounds.push(figures);
    }
    const run = await runCpuUs(dir, model.port);
    const rows = guardRows(rounds, run.us);
    const lines = [
      '| quick guard | CPU µs | vs baseline | target | fails over |',
      '|---|---:|---:|---:|---:|',
      ...rows.map(
        (r) =>
          `| ${r.row} | ${r.us.toFixed(1)} | ${r.ratio.toFixed(2)}× | ${r.target.toFixed(2)}× | ${(r.target * SLACK).toFixed(2)}×${r.over ? ' — OVER' : ''} |`,
      ),
      '',
      `baseline ${median(rounds.map((r) => r.baseline ?? 0)).toFixed(1)} µs; ratios are medians of ${ROUNDS} rounds paired with the baseline; ${run.drained} runs drained; ${((performance.now() - started) / 1000).toFixed(0)} s`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    const over = rows.filter((r) => r.over);
    if (over.length > 0)
      process.stderr.write(`bench: over target by more than 15 %: ${over.map((r) => r.row).join(', ')}\n`);
    return over.length > 0 ? 1 : 0;
  } finally {
    for (const child of [model.child, stalled.child, bare.child]) child.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
}
