import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { assertLogLines } from './log-lines.js';

export const ROOT = resolve(import.meta.dirname, '../..');
const BIN = join(ROOT, 'bin/hookd.js');

/** A folder under the OS temp dir, removed by `cleanup`. */
export function makeTempDir(prefix = 'hookd-test-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface HookdProcess {
  readonly url: string;
  readonly dir: string;
  readonly child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves when the process has exited. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export interface StartOptions {
  /** Written to `<dir>/hookd.json5`; `storage.path` defaults into the dir. Omit for the embedded default. */
  config?: Record<string, unknown>;
  /** Raw config file text instead of `config`. */
  configText?: string;
  dir?: string;
  env?: NodeJS.ProcessEnv;
  args?: string[];
  /** The hookd command to run (default `serve`). */
  command?: string[];
  /** Ready when stdout or stderr matches this; default: the `hookd listening` line (which gives the URL). */
  readyPattern?: RegExp;
}

function spawnHookd(args: string[], cwd: string, env: NodeJS.ProcessEnv = {}, input?: string): ChildProcess {
  const child = spawn(process.execPath, ['--no-node-snapshot', BIN, ...args], {
    cwd,
    env: { ...process.env, HOOKD_CONFIG: '', ...env },
    stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  if (input !== undefined) child.stdin?.end(input);
  return child;
}

/** Collects what a child prints; read `out` and `err` at any time. */
function capture(child: ChildProcess): { out: string; err: string } {
  const output = { out: '', err: '' };
  child.stdout?.on('data', (chunk: Buffer) => {
    output.out += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output.err += chunk.toString();
  });
  return output;
}

/** Writes a config into `dir` and returns its path. */
export function writeConfig(dir: string, config: Record<string, unknown>): string {
  const file = join(dir, 'hookd.json5');
  const storage = { path: join(dir, 'data/hookd.db'), ...(config.storage as object | undefined) };
  const server = { port: 0, ...(config.server as object | undefined) };
  writeFileSync(file, JSON.stringify({ ...config, server, storage }, null, 2));
  return file;
}

/** Spawns `hookd serve` and waits until it listens. */
export async function startHookd(options: StartOptions = {}): Promise<HookdProcess> {
  const temp = options.dir ? { dir: options.dir, cleanup: () => {} } : makeTempDir();
  const dir = temp.dir;
  const args = [...(options.command ?? ['serve']), ...(options.args ?? [])];
  if (options.configText !== undefined) {
    writeFileSync(join(dir, 'hookd.json5'), options.configText);
    args.push('--config', join(dir, 'hookd.json5'));
  } else if (options.config) {
    args.push('--config', writeConfig(dir, options.config));
  }
  const child = spawnHookd(args, dir, options.env);
  const output = capture(child);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.on('exit', (code, signal) => done({ code, signal })),
  );
  const url = await new Promise<string>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`hookd did not start:\n${output.out}\n${output.err}`)), 20_000);
    const check = () => {
      const match = (options.readyPattern ?? /"url":"(http:\/\/[^"]+)","hooksPath"[^\n]*"msg":"hookd listening"/).exec(
        `${output.out}\n${output.err}`,
      );
      if (match) {
        clearTimeout(timer);
        done(match[1] ?? '');
      }
    };
    child.stdout?.on('data', check);
    child.stderr?.on('data', check);
    exited.then(({ code }) => {
      clearTimeout(timer);
      fail(new Error(`hookd exited with ${code} before listening:\n${output.out}\n${output.err}`));
    });
  });
  return {
    url,
    dir,
    child,
    stdout: () => output.out,
    stderr: () => output.err,
    exited,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
      if (!options.dir) temp.cleanup();
      // Every spawned gateway's lines are checked once it is done (test/helpers/log-lines.ts).
      assertLogLines(output.out + output.err, `hookd ${args.join(' ')}`);
    },
  };
}

/** Runs a hookd command to completion. */
export async function runHookd(
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number; input?: string } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawnHookd(args, options.cwd ?? ROOT, options.env, options.input);
  const output = capture(child);
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 20_000);
  const code = await new Promise<number | null>((done) => child.on('exit', (c) => done(c)));
  clearTimeout(timer);
  assertLogLines(output.out + output.err, `hookd ${args.join(' ')}`);
  return { code, stdout: output.out, stderr: output.err };
}
