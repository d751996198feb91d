// What every bench scenario uses: child processes, their RSS and CPU time, and autocannon.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import autocannon from 'autocannon';

export const TOKEN = 'bench-hook-token-0123456789abcdef';
export const CONNECTIONS = 50;
export const HOOK_HEADERS = { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` };

/** How much of a child's stderr is kept, to be shown when it exits with a failure. */
const STDERR_TAIL_CHARS = 8192;

/**
 * Starts `node args` and resolves with the port it prints. Its stderr (a gateway's banner, its
 * curl) is kept, not printed, and shown when it exits with a failure.
 */
export function startChild(
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, ['--no-node-snapshot', ...args], {
    cwd,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr?.on('data', (c: Buffer) => {
    err = (err + c.toString()).slice(-STDERR_TAIL_CHARS);
  });
  let started = false;
  return new Promise((done, fail) => {
    let out = '';
    const onOut = (c: Buffer) => {
      out += c.toString();
      const port = /"port":(\d+)/.exec(out) ?? /"url":"http:\/\/127\.0\.0\.1:(\d+)"/.exec(out);
      if (!port) return;
      // Its log is drained from now on, not kept: a drain of 100,000 runs logs as many lines.
      child.stdout?.off('data', onOut).resume();
      started = true;
      done({ child, port: Number(port[1]) });
    };
    child.stdout?.on('data', onOut);
    // Before it is up, an exit fails the start; after, a failure's stderr is printed.
    child.on('exit', (code) => {
      if (!started) fail(new Error(`${args.join(' ')} exited with ${code}: ${out}${err}`));
      else if (code !== 0 && code !== null) process.stderr.write(`${args.join(' ')} exited with ${code}:\n${err}\n`);
    });
  });
}

export function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

const TICKS_PER_S = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;

/** A process's user + system CPU time so far, all its threads, in microseconds (from /proc). */
export function cpuUs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) / TICKS_PER_S) * 1e6;
}

/**
 * A process's CPU time and its living children's (the transform process of
 * `hooks.transforms.isolation: "process"`; esbuild's service, idle under load), in microseconds.
 */
export function treeCpuUs(pid: number): number {
  let total = cpuUs(pid);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) total += cpuUs(Number(entry));
    } catch {
      // Ended meanwhile.
    }
  }
  return total;
}

/** Loads `path` with autocannon; `cpuUsPerAnswer` is the server's CPU (and its children's) over the load ÷ answers. */
export async function load(
  port: number,
  pid: number,
  path: string,
  body: string,
  options: { duration?: number; amount?: number } = {},
): Promise<autocannon.Result & { cpuUsPerAnswer: number }> {
  const cpuBefore = treeCpuUs(pid);
  const result = await autocannon({
    url: `http://127.0.0.1:${port}${path}`,
    method: 'POST',
    connections: CONNECTIONS,
    headers: HOOK_HEADERS,
    body,
    ...(options.amount ? { amount: options.amount } : { duration: options.duration ?? 4 }),
  });
  const answers = Math.max(1, result.requests.total - result.errors - result.timeouts);
  return Object.assign(result, { cpuUsPerAnswer: (treeCpuUs(pid) - cpuBefore) / answers });
}

/** The middle value (the upper one of an even count); 0 for none. */
export const median = (values: readonly number[]) =>
  [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)] ?? 0;

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
