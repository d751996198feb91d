// Start-up and footprint (docs/operations.md#start-up-and-memory): the gateway against a bare
// node:http server started the same way (`node --no-node-snapshot <file>.js`), each from spawn to
// the line that says it listens, and its RSS just after that and once it has idled.
import type { ChildProcess } from 'node:child_process';
import { cpuUs, median, rssMb, sleep, startChild } from './lib.js';

/** One way to start a server: what to spawn, from which folder. */
export interface StartScenario {
  readonly name: string;
  /** Prepares a fresh folder (a new data folder each start) and returns the arguments after `node --no-node-snapshot`. */
  prepare(): { args: string[]; cwd: string };
}

export interface StartFigures {
  readonly readyMs: number;
  /** User + system CPU time of the process until ready. */
  readonly cpuMs: number;
  /** RSS 0.5 s after ready. */
  readonly rssReadyMb: number;
  /** RSS after `idleS` of idling (V8 gives back the young generation a start grew after some seconds). */
  readonly rssIdleMb: number;
  readonly rounds: readonly { readyMs: number; rssIdleMb: number }[];
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  child.kill('SIGTERM');
  await new Promise((done) => child.once('exit', done));
}

/**
 * Starts every scenario `rounds` times, interleaved (each round one scenario later), and gives
 * the medians per scenario.
 */
export async function measureStart(
  scenarios: readonly StartScenario[],
  options: { rounds: number; idleS: number },
): Promise<Record<string, StartFigures>> {
  const samples = new Map<string, { readyMs: number; cpuMs: number; rssReadyMb: number; rssIdleMb: number }[]>();
  for (let round = 0; round < options.rounds; round++) {
    for (let i = 0; i < scenarios.length; i++) {
      const scenario = scenarios[(i + round) % scenarios.length] as StartScenario;
      const { args, cwd } = scenario.prepare();
      const env = { ...process.env, HOOKD_CONFIG: '' };
      const started = performance.now();
      const { child } = await startChild(args, cwd, env);
      const readyMs = performance.now() - started;
      const pid = child.pid as number;
      const cpuMs = cpuUs(pid) / 1000;
      await sleep(500);
      const rssReadyMb = rssMb(pid);
      await sleep(options.idleS * 1000 - 500);
      const rssIdleMb = rssMb(pid);
      await stop(child);
      const list = samples.get(scenario.name) ?? [];
      list.push({ readyMs, cpuMs, rssReadyMb, rssIdleMb });
      samples.set(scenario.name, list);
    }
  }
  return Object.fromEntries(
    [...samples].map(([name, list]) => [
      name,
      {
        readyMs: median(list.map((s) => s.readyMs)),
        cpuMs: median(list.map((s) => s.cpuMs)),
        rssReadyMb: median(list.map((s) => s.rssReadyMb)),
        rssIdleMb: median(list.map((s) => s.rssIdleMb)),
        rounds: list.map(({ readyMs, rssIdleMb }) => ({ readyMs, rssIdleMb })),
      },
    ]),
  );
}
