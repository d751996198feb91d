import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from './hookd-process.js';

const exec = promisify(execFile);

/** What `npm pack` reports of the tarball it wrote. */
export interface Packed {
  readonly tarball: string;
  readonly files: readonly string[];
}

/** The parts of the checkout that `npm pack` builds and packs from (its prepack runs the build). */
const PACKED_FROM = ['package.json', 'README.md', 'bin', 'src', 'scripts', 'presets', 'console'];

/**
 * `npm pack` as a user runs it in a clone, but in a copy of the checkout under `dir`, so that
 * its prepack build writes that copy's dist/, never the one the other test files' gateways run.
 */
export async function packHookd(dir: string): Promise<Packed> {
  const stage = join(dir, 'clone');
  mkdirSync(stage);
  for (const part of PACKED_FROM) cpSync(join(ROOT, part), join(stage, part), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(stage, 'node_modules'));
  const { stdout } = await exec('npm', ['pack', '--json', '--pack-destination', dir], {
    cwd: stage,
    env: npmEnv(),
    maxBuffer: 16 * 1024 * 1024,
  });
  const [report] = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[];
  if (!report) throw new Error(`npm pack printed no report: ${stdout}`);
  return { tarball: join(dir, report.filename), files: report.files.map((f) => f.path) };
}

/** The native dependencies that build on install, where this checkout's built module lies in each. */
const NATIVE = [
  { name: 'isolated-vm', binary: 'out/isolated_vm.node' },
  { name: 'better-sqlite3', binary: 'build/Release/better_sqlite3.node' },
] as const;

/**
 * Prebuilt binaries for prebuild-install, made from the modules this checkout's `npm ci` built:
 * with them the install scripts npm runs (as approved by allowScripts) find their binary in
 * `dir` instead of compiling for minutes. The returned variables point prebuild-install there
 * (its `local prebuilds`); nothing is fetched from outside the npm registry either way.
 */
export async function localPrebuilds(dir: string): Promise<NodeJS.ProcessEnv> {
  mkdirSync(dir, { recursive: true });
  const env: NodeJS.ProcessEnv = {};
  for (const { name, binary } of NATIVE) {
    const pkgDir = join(ROOT, 'node_modules', name);
    const { version } = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as { version: string };
    // prebuild-install's file name: {name}-v{version}-{runtime}-v{abi}-{platform}{libc}-{arch}.tar.gz
    const file = `${name}-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
    await exec('tar', ['-czf', join(dir, file), '-C', pkgDir, binary]);
    env[`npm_config_${name.replace(/[^a-zA-Z0-9]/g, '_')}_local_prebuilds`] = dir;
  }
  return env;
}

/**
 * A user's shell environment for npm: none of the `npm_*` variables of the `npm test` this may
 * run under (they would point npm at this checkout), and no update check, audit or funding notice.
 */
export function npmEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const own = Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key) && key !== 'INIT_CWD');
  return {
    ...Object.fromEntries(own),
    HOOKD_CONFIG: '',
    npm_config_update_notifier: 'false',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    ...extra,
  };
}
