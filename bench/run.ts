// `npm run bench`: loads hookd and a bare node:http baseline with autocannon in one run,
// and prints every figure as a ratio to a baseline measured in the same run.
import type { ChildProcess } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type autocannon from 'autocannon';
import { postgresBin } from '../test/helpers/postgres.js';
import { agentBody, filler, hookdConfig, mailBody, ROOT, startHookd } from './gateway.js';
import { type BenchGateway, measureIsolation } from './isolation.js';
import { CONNECTIONS, load, median, rssMb, startChild, TOKEN } from './lib.js';
import { quick } from './quick.js';
import { measureScale, type ScaleResult, type ScaleSetup } from './scale.js';
import { measureStart, type StartFigures } from './start.js';
import { measureTransformOverhead } from './transform-overhead.js';

const DURATION_S = Number(process.env.BENCH_DURATION ?? 4);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const RSS_REQUESTS = Number(process.env.BENCH_RSS_REQUESTS ?? 200_000);
/** Agent requests in each of the soak's five rounds. */
const SOAK_ROUND = Number(process.env.BENCH_SOAK_ROUND ?? 40_000);

interface Scenario {
  name: string;
  path: string;
  body: string;
  server: 'baseline' | 'hookd';
  /** The request log off (`hooks.log.enabled: false`), to weigh what it costs. */
  logOff?: boolean;
  /** Refused requests not recorded (`hooks.log.refusedPerMinute: 0`), to weigh what recording them costs. */
  refusedOff?: boolean;
  /** Transforms in a process of their own (`hooks.transforms.isolation: "process"`); its CPU counts. */
  processIsolation?: boolean;
}

type Measured = autocannon.Result & { cpuUsPerAnswer: number };

interface Row {
  scenario: string;
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  ratio: string;
  cpuUs: number;
  cpuRatio: string;
}

/** The scale-out rows (docs/scale.md), or undefined where PostgreSQL is not installed. */
async function scaleRows(
  stalledPort: number,
): Promise<{ table: string; results: Record<ScaleSetup, ScaleResult> } | undefined> {
  if (!postgresBin()) {
    process.stderr.write('bench: scale-out rows skipped: PostgreSQL is not installed (apt-get install postgresql)\n');
    return undefined;
  }
  const dirs: string[] = [];
  const results = await measureScale({
    agentBody,
    durationS: DURATION_S,
    rounds: ROUNDS,
    async start(storage) {
      const nodeDir = mkdtempSync(join(tmpdir(), 'hookd-bench-node-'));
      dirs.push(nodeDir);
      cpSync(join(ROOT, 'bench/transforms'), join(nodeDir, 'transforms'), { recursive: true });
      hookdConfig(nodeDir, stalledPort, 1, true, storage);
      const { child, port } = await startHookd(nodeDir);
      return { child, port };
    },
    async stop(node) {
      node.child.kill('SIGTERM');
      await new Promise((r) => node.child.once('exit', r));
    },
  });
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  const base = results['one node on SQLite'].reqPerSec;
  const table = [
    '| `/hooks/agent` on | req/s | p99 ms | non-2xx | vs one node on SQLite | hookd CPU µs/request | PostgreSQL CPU µs/request |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...Object.entries(results).map(
      ([name, r]) =>
        `| ${name} | ${Math.round(r.reqPerSec)} | ${r.p99Ms} | ${r.non2xx} | ${Math.round((r.reqPerSec / base) * 100)} % | ${Math.round(r.cpuUsPerAnswer)} | ${r.serverCpuUsPerAnswer ? Math.round(r.serverCpuUsPerAnswer) : '—'} |`,
    ),
  ].join('\n');
  return { table, results };
}

/**
 * Start to ready and RSS: a bare node:http server, the embedded default (its config written to a
 * file, on port 0, so that it never collides with a gateway on 8787), and 10 transforms beside a
 * template mapping, a spinning transform and the mail preset (hookdConfig).
 */
async function startRows(modelPort: number) {
  const dirs: string[] = [];
  const fresh = () => {
    const d = mkdtempSync(join(tmpdir(), 'hookd-bench-start-'));
    dirs.push(d);
    return d;
  };
  const gateway = (d: string) => ({
    args: [join(ROOT, 'bin/hookd.js'), 'serve', '--config', join(d, 'hookd.json5')],
    cwd: d,
  });
  const names = { bare: 'bare node:http', embedded: 'embedded default', ten: '10 transforms' } as const;
  const figures = await measureStart(
    [
      { name: names.bare, prepare: () => ({ args: [join(ROOT, 'bench/baseline-server.mjs')], cwd: ROOT }) },
      {
        name: names.embedded,
        prepare: () => {
          const d = fresh();
          const config = {
            server: { port: 0 },
            hooks: { enabled: true, token: TOKEN },
            storage: { path: 'data/hookd.db' },
          };
          writeFileSync(join(d, 'hookd.json5'), JSON.stringify(config));
          return gateway(d);
        },
      },
      {
        name: names.ten,
        prepare: () => {
          const d = fresh();
          cpSync(join(ROOT, 'bench/transforms'), join(d, 'transforms'), { recursive: true });
          hookdConfig(d, modelPort, 10);
          return gateway(d);
        },
      },
    ],
    { rounds: Number(process.env.BENCH_START_ROUNDS ?? 5), idleS: Number(process.env.BENCH_IDLE_S ?? 15) },
  );
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  const [bare, embedded, ten] = [names.bare, names.embedded, names.ten].map((n) => figures[n] as StartFigures) as [
    StartFigures,
    StartFigures,
    StartFigures,
  ];
  const idleS = Number(process.env.BENCH_IDLE_S ?? 15);
  const table = [
    `| start (median of ${process.env.BENCH_START_ROUNDS ?? 5}) | to ready ms | CPU ms | vs bare | RSS at ready + 0.5 s MB | RSS idle ${idleS} s MB |`,
    '|---|---:|---:|---:|---:|---:|',
    ...Object.entries(figures).map(
      ([name, f]) =>
        `| ${name} | ${Math.round(f.readyMs)} | ${Math.round(f.cpuMs)} | ${(f.readyMs / bare.readyMs).toFixed(2)}× | ${f.rssReadyMb.toFixed(1)} | ${f.rssIdleMb.toFixed(1)} |`,
    ),
  ].join('\n');
  const targets = [
    {
      target: 'start to ready ≤ 3.3× the bare server started the same way, embedded default',
      value: `${Math.round(embedded.readyMs)} ms, ${(embedded.readyMs / bare.readyMs).toFixed(2)}× (bare node:http ${Math.round(bare.readyMs)} ms)`,
      met: embedded.readyMs / bare.readyMs <= 3.3,
    },
    {
      target: 'start to ready ≤ 500 ms with 10 transforms',
      value: `${Math.round(ten.readyMs)} ms`,
      met: ten.readyMs <= 500,
    },
    {
      target: 'idle RSS ≤ 60 MB, embedded default',
      value: `${embedded.rssIdleMb.toFixed(1)} MB after ${idleS} s, ${embedded.rssReadyMb.toFixed(1)} MB 0.5 s after ready (bare node:http ${bare.rssIdleMb.toFixed(1)} MB)`,
      met: embedded.rssIdleMb <= 60,
    },
  ];
  return { figures, table, targets };
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'hookd-bench-'));
  cpSync(join(ROOT, 'bench/transforms'), join(dir, 'transforms'), { recursive: true });
  const children: ChildProcess[] = [];
  try {
    const model = await startChild(['--import', 'tsx', join(ROOT, 'bench/fake-model.ts')], ROOT);
    children.push(model.child);
    const stalled = await startChild(['--import', 'tsx', join(ROOT, 'bench/fake-model.ts')], ROOT, {
      ...process.env,
      BENCH_MODEL_STALL: '1',
    });
    children.push(stalled.child);
    const baseline = await startChild([join(ROOT, 'bench/baseline-server.mjs')], ROOT);
    children.push(baseline.child);
    const isolationRun = () =>
      measureIsolation({
        agentBody,
        durationS: DURATION_S,
        soakRequests: SOAK_ROUND,
        spinRounds: Number(process.env.BENCH_SPIN_ROUNDS ?? 3),
        runsRounds: Number(process.env.BENCH_RUNS_ROUNDS ?? 9),
        async start(which) {
          rmSync(join(dir, 'data'), { recursive: true, force: true });
          hookdConfig(dir, which === 'answering' ? model.port : stalled.port);
          const started = await startHookd(dir);
          return { child: started.child, port: started.port, dir };
        },
        async stop(gateway: BenchGateway) {
          gateway.child.kill('SIGTERM');
          await new Promise((r) => gateway.child.once('exit', r));
        },
      });
    if (process.env.BENCH_ONLY === 'isolation') {
      const { spinning, runs, soak } = await isolationRun();
      const figures = {
        spinP99Ms: { plain: spinning.plainP99Ms, loaded: spinning.loadedP99Ms },
        runCpuUs: runs.runCpuUs,
        runsRps: { paused: runs.pausedRps, executing: runs.executingRps, ratio: runs.ratio },
        soak,
      };
      process.stdout.write(`${JSON.stringify(figures)}\n`);
      return;
    }
    if (process.env.BENCH_ONLY === 'scale') {
      const scale = await scaleRows(stalled.port);
      process.stdout.write(`${scale?.table ?? 'no PostgreSQL here'}\n`);
      return;
    }

    const starts = await startRows(model.port);
    if (process.env.BENCH_ONLY === 'start') {
      process.stdout.write(`${starts.table}\n`);
      return;
    }

    const scenarios: Scenario[] = [
      { name: 'baseline (node:http, JSON, 202)', path: '/', body: agentBody, server: 'baseline' },
      {
        name: 'POST /hooks/wake',
        path: '/hooks/wake',
        body: JSON.stringify({ text: `Build failed: ${filler}`, mode: 'next-heartbeat' }),
        server: 'hookd',
      },
      { name: 'POST /hooks/agent', path: '/hooks/agent', body: agentBody, server: 'hookd' },
      {
        name: 'POST /hooks/agent, request log off',
        path: '/hooks/agent',
        body: agentBody,
        server: 'hookd',
        logOff: true,
      },
      {
        name: 'POST /hooks/agent, refused requests not recorded',
        path: '/hooks/agent',
        body: agentBody,
        server: 'hookd',
        refusedOff: true,
      },
      { name: 'template mapping', path: '/hooks/template', body: agentBody, server: 'hookd' },
      { name: 'transform mapping', path: '/hooks/transform', body: agentBody, server: 'hookd' },
      {
        name: 'transform mapping, transforms in their own process',
        path: '/hooks/transform',
        body: agentBody,
        server: 'hookd',
        processIsolation: true,
      },
      { name: 'mail preset (10 messages)', path: '/hooks/mail', body: mailBody, server: 'hookd' },
    ];
    // The request scenarios run with the model stalled: the runs they create wait, so that a
    // request's CPU is the request's alone (an executed run costs several requests' worth and is
    // measured apart, below). Each hookd scenario gets a fresh gateway and data folder; a 1 s
    // warm-up settles the JIT. The machine is noisy, so every scenario runs ROUNDS times,
    // interleaved, and the median counts.
    hookdConfig(dir, stalled.port);
    const rounds: Record<string, Measured[]> = {};
    for (let round = 0; round < ROUNDS; round++) {
      // Each round starts one scenario later, so that a drift of the machine's speed within
      // a round does not always land on the same scenarios.
      const order = scenarios.map((_, i) => scenarios[(i + round) % scenarios.length] as Scenario);
      for (const s of order) {
        rmSync(join(dir, 'data'), { recursive: true, force: true });
        hookdConfig(dir, stalled.port, 1, !s.logOff, {}, !s.refusedOff, s.processIsolation ? 'process' : 'inline');
        const hookd = s.server === 'hookd' ? await startHookd(dir) : undefined;
        const port = hookd ? hookd.port : baseline.port;
        const pid = (hookd ? hookd.child.pid : baseline.child.pid) as number;
        await load(port, pid, s.path, s.body, { duration: 1 });
        const result = await load(port, pid, s.path, s.body, { duration: DURATION_S });
        rounds[s.name] = [...(rounds[s.name] ?? []), result];
        hookd?.child.kill('SIGTERM');
        if (hookd) await new Promise((r) => hookd.child.once('exit', r));
      }
    }
    const results: Record<string, Measured> = {};
    for (const [name, list] of Object.entries(rounds)) {
      const sorted = [...list].sort((a, b) => a.requests.average - b.requests.average);
      results[name] = sorted[Math.floor(sorted.length / 2)] as Measured;
      process.stderr.write(`bench: ${name}: ${sorted.map((r) => Math.round(r.requests.average)).join(' / ')} req/s\n`);
    }
    const rps = (name: string) => results[name]?.requests.average ?? 0;
    // The log row pairs the two agent scenarios of each round (a drift of the machine's speed
    // from one round to the next then moves both sides of a pair) and takes the median ratio.
    const logPairs = (rounds['POST /hooks/agent'] ?? []).map((on, i) => ({
      on: on.requests.average,
      off: rounds['POST /hooks/agent, request log off']?.[i]?.requests.average ?? 0,
    }));
    const logRatio = median(logPairs.map((p) => p.on / Math.max(1, p.off)));
    const logPairList = logPairs.map((p) => `${Math.round(p.on)}/${Math.round(p.off)}`).join(', ');
    const cpu = (name: string) => results[name]?.cpuUsPerAnswer ?? 0;
    const base = rps(scenarios[0]?.name as string);
    const baseCpu = cpu(scenarios[0]?.name as string);
    const rows: Row[] = scenarios.map((s) => {
      const r = results[s.name] as Measured;
      return {
        scenario: s.name,
        reqPerSec: Math.round(r.requests.average),
        p50Ms: r.latency.p50,
        p99Ms: r.latency.p99,
        non2xx: r.non2xx,
        ratio: `${Math.round((r.requests.average / base) * 100)} %`,
        cpuUs: Math.round(r.cpuUsPerAnswer),
        cpuRatio: `${(r.cpuUsPerAnswer / baseCpu).toFixed(2)}×`,
      };
    });

    // Recording refused requests, weighed on /hooks/agent: the CPU per request of each round's
    // pair (recorded, not recorded), and the median difference.
    const refusedPairs = (rounds['POST /hooks/agent'] ?? []).map((on, i) => ({
      on: on.cpuUsPerAnswer,
      off: rounds['POST /hooks/agent, refused requests not recorded']?.[i]?.cpuUsPerAnswer ?? 0,
    }));
    const refusedCostUs = median(refusedPairs.map((p) => p.on - p.off));
    const refusedPairList = refusedPairs.map((p) => `${p.on.toFixed(1)}/${p.off.toFixed(1)}`).join(', ');
    if (process.env.BENCH_ONLY === 'requests') {
      for (const r of rows)
        process.stdout.write(`${r.scenario}: ${r.reqPerSec} req/s, p99 ${r.p99Ms} ms, ${r.cpuUs} µs (${r.cpuRatio})\n`);
      process.stdout.write(`request log on vs off: ${Math.round(logRatio * 100)} % (pairs ${logPairList})\n`);
      process.stdout.write(
        `refused requests recorded vs not, /hooks/agent CPU: ${refusedCostUs.toFixed(1)} µs per request (pairs ${refusedPairList})\n`,
      );
      return;
    }

    rmSync(join(dir, 'data'), { recursive: true, force: true });
    const hookd = await startHookd(dir);
    children.push(hookd.child);
    const probe = JSON.stringify({ text: 'rss probe', mode: 'next-heartbeat' });
    const hookdPid = hookd.child.pid as number;
    // Settle first (the JIT, SQLite's page cache), then measure growth over the long run.
    await load(hookd.port, hookdPid, '/hooks/wake', probe, { amount: 20_000 });
    const rssBefore = rssMb(hookdPid);
    await load(hookd.port, hookdPid, '/hooks/wake', probe, { amount: RSS_REQUESTS });
    await new Promise((r) => setTimeout(r, 1000));
    const rssAfter = rssMb(hookdPid);
    hookd.child.kill('SIGTERM');
    await new Promise((r) => hookd.child.once('exit', r));

    const isolation = await isolationRun();
    const { spinning, runs, soak } = isolation;

    const scale = await scaleRows(stalled.port);
    const overhead = await measureTransformOverhead(join(ROOT, 'bench/transforms'));
    const agent = rps('POST /hooks/agent');
    const template = rps('template mapping');
    const transform = rps('transform mapping');
    const agentP99 = results['POST /hooks/agent']?.latency.p99 ?? 0;
    const agentCpu = cpu('POST /hooks/agent');
    const logOff = rps('POST /hooks/agent, request log off');
    const templateCpu = cpu('template mapping');
    const wakeCpu = cpu('POST /hooks/wake');
    // The request log's CPU: each round's pair (log on, log off), and the median difference.
    const logCpuPairs = (rounds['POST /hooks/agent'] ?? []).map((on, i) => ({
      on: on.cpuUsPerAnswer,
      off: rounds['POST /hooks/agent, request log off']?.[i]?.cpuUsPerAnswer ?? 0,
    }));
    const logCostUs = median(logCpuPairs.map((p) => p.on - p.off));
    const logCpuPairList = logCpuPairs.map((p) => `${p.on.toFixed(1)}/${p.off.toFixed(1)}`).join(', ');
    const transformCpu = cpu('transform mapping');
    const spinRatio = spinning.loadedP99 / Math.max(1, spinning.plainP99);
    const rpsList = (values: readonly number[]) => values.map((v) => Math.round(v)).join('/');
    const targets = [
      {
        target: '/hooks/agent CPU per request ≤ 2.3× baseline',
        value: `${agentCpu.toFixed(0)} µs (${(agentCpu / baseCpu).toFixed(2)}×)`,
        met: agentCpu / baseCpu <= 2.3,
      },
      {
        target: '/hooks/wake CPU per request ≤ 2.3× baseline',
        value: `${wakeCpu.toFixed(0)} µs (${(wakeCpu / baseCpu).toFixed(2)}×)`,
        met: wakeCpu / baseCpu <= 2.3,
      },
      {
        target: 'template mapping CPU per request ≤ 3.2× baseline',
        value: `${templateCpu.toFixed(0)} µs (${(templateCpu / baseCpu).toFixed(2)}×)`,
        met: templateCpu / baseCpu <= 3.2,
      },
      {
        target: 'the request log ≤ 10 µs of CPU per request (/hooks/agent − log off)',
        value: `${logCostUs.toFixed(1)} µs (median of the rounds' pairs, on/off µs: ${logCpuPairList})`,
        met: logCostUs <= 10,
      },
      {
        target: 'transform mapping CPU ≤ 1.15× template',
        value: `${transformCpu.toFixed(0)} µs (${(transformCpu / templateCpu).toFixed(2)}×)`,
        met: transformCpu / templateCpu <= 1.15,
      },
      {
        target: 'an executed run ≤ 150 µs of gateway CPU',
        value: `${runs.runCpuUs.toFixed(0)} µs (${runs.drained} runs drained)`,
        met: runs.runCpuUs <= 150,
      },
      {
        target: '/hooks/agent p99 with 4 clients on a 900 ms transform ≤ 2× without',
        value: `${spinning.loadedP99} vs ${spinning.plainP99} ms (${spinRatio.toFixed(2)}×; medians of ${spinning.loadedP99Ms.join('/')} and ${spinning.plainP99Ms.join('/')}; ${spinning.spins} spins answered ${JSON.stringify(spinning.spinStatuses)})`,
        met: spinRatio <= 2,
      },
      {
        target: '/hooks/agent with runs executing ≥ 90 % of runs paused',
        value: `${Math.round(runs.ratio * 100)} % (median of pairs ${rpsList(runs.executingRps)} vs ${rpsList(runs.pausedRps)} req/s)`,
        met: runs.ratio >= 0.9,
      },
      {
        target: `soak: RSS plateaus over 5 rounds of ${SOAK_ROUND.toLocaleString('en')} agent requests (runs drained): after the fifth ≤ 1.15× after the first`,
        value: `${soak.idleMb.toFixed(1)} MB idle; ${soak.rounds.map((r) => r.rssMb.toFixed(1)).join(' → ')} MB (${((soak.rounds.at(-1)?.rssMb ?? 0) / (soak.rounds[0]?.rssMb ?? 1)).toFixed(2)}×; ${soak.unfinished} of ${soak.runs} runs unfinished)`,
        met: (soak.rounds.at(-1)?.rssMb ?? 0) / (soak.rounds[0]?.rssMb ?? 1) <= 1.15 && soak.unfinished === 0,
      },
      {
        target: '/hooks/agent ≥ 60 % of baseline',
        value: `${Math.round((agent / base) * 100)} %`,
        met: agent / base >= 0.6,
      },
      { target: '/hooks/agent p99 ≤ 10 ms', value: `${agentP99} ms`, met: agentP99 <= 10 },
      {
        target: '/hooks/agent with the request log ≥ 90 % of it off',
        value: `${Math.round(logRatio * 100)} % (median of the rounds' pairs, on/off req/s: ${logPairList}; medians ${Math.round(agent)} vs ${Math.round(logOff)} req/s, CPU ${agentCpu.toFixed(0)} vs ${cpu('POST /hooks/agent, request log off').toFixed(0)} µs)`,
        met: logRatio >= 0.9,
      },
      {
        target: 'recording refused requests moves /hooks/agent CPU per request by ≤ 3 µs',
        value: `${refusedCostUs.toFixed(1)} µs (median of the rounds' pairs, recorded/not µs: ${refusedPairList})`,
        met: Math.abs(refusedCostUs) <= 3,
      },
      {
        target: 'template mapping ≥ 90 % of /hooks/agent',
        value: `${Math.round((template / agent) * 100)} %`,
        met: template / agent >= 0.9,
      },
      {
        target: 'transform mapping ≥ 80 % of template mapping',
        value: `${Math.round((transform / template) * 100)} %`,
        met: transform / template >= 0.8,
      },
      {
        target: 'warm transform call p50 ≤ 15 µs (2 KB payload)',
        value: `${overhead.warmP50Us.toFixed(1)} µs`,
        met: overhead.warmP50Us <= 15,
      },
      {
        target: 'first call of a new transform ≤ 5 ms',
        value: `${overhead.firstCallMs.toFixed(2)} ms`,
        met: overhead.firstCallMs <= 5,
      },
      ...starts.targets,
      {
        target: `RSS growth < 20 % over ${RSS_REQUESTS.toLocaleString('en')} requests`,
        value: `${rssBefore.toFixed(1)} → ${rssAfter.toFixed(1)} MB (${(((rssAfter - rssBefore) / rssBefore) * 100).toFixed(1)} %)`,
        met: (rssAfter - rssBefore) / rssBefore < 0.2,
      },
    ];

    const table = [
      '| scenario | req/s | p50 ms | p99 ms | non-2xx | vs baseline | CPU µs/request | CPU vs baseline |',
      '|---|---:|---:|---:|---:|---:|---:|---:|',
      ...rows.map(
        (r) =>
          `| ${r.scenario} | ${r.reqPerSec} | ${r.p50Ms} | ${r.p99Ms} | ${r.non2xx} | ${r.ratio} | ${r.cpuUs} | ${r.cpuRatio} |`,
      ),
      '',
      '| target | measured | met |',
      '|---|---|---|',
      ...targets.map((t) => `| ${t.target} | ${t.value} | ${t.met ? 'yes' : 'NO'} |`),
      '',
      starts.table,
      '',
      scale ? `${scale.table}\n` : 'scale-out rows skipped: PostgreSQL is not installed\n',
      `transform details: warm p50 ${overhead.warmP50Us.toFixed(1)} µs, p99 ${overhead.warmP99Us.toFixed(1)} µs; first call ${overhead.firstCallMs.toFixed(2)} ms (median of 9: isolate + load + call; esbuild compile ${overhead.compileMs.toFixed(1)} ms before it); ${CONNECTIONS} connections, median of ${ROUNDS} interleaved rounds of ${DURATION_S} s per scenario, node ${process.version}`,
    ].join('\n');
    process.stdout.write(`${table}\n`);
    writeFileSync(
      join(ROOT, 'bench/results.json'),
      JSON.stringify(
        {
          date: new Date().toISOString(),
          rows,
          targets,
          overhead,
          start: starts.figures,
          rssBefore,
          rssAfter,
          isolation: {
            spinning: {
              plainP99Ms: spinning.plainP99Ms,
              loadedP99Ms: spinning.loadedP99Ms,
              spins: spinning.spins,
              spinStatuses: spinning.spinStatuses,
            },
            runs: {
              pausedRps: runs.pausedRps,
              executingRps: runs.executingRps,
              ratio: runs.ratio,
              runCpuUs: runs.runCpuUs,
              drained: runs.drained,
            },
            soak,
          },
          ...(scale ? { scale: scale.results } : {}),
        },
        null,
        2,
      ),
    );
    writeFileSync(join(ROOT, 'bench/results.md'), `${table}\n`);
  } finally {
    for (const child of children) child.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv.includes('--quick')) process.exitCode = await quick();
else await main();
