import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseEnv } from 'node:util';
import { hookdError } from '../errors.js';
import type { CliIo } from './io.js';
import {
  EXAMPLE,
  GITIGNORE_LINES,
  packageJson,
  type ScaffoldOptions,
  scaffoldFiles,
  TOKEN_VARIABLE,
} from './scaffold.js';

/** hookd's package root (dist/cli and src/cli sit as deep), and its package.json. */
const OWN_ROOT = new URL('../../', import.meta.url);
function ownPackage(): {
  version: string;
  allowScripts?: Record<string, boolean>;
  devDependencies?: Record<string, string>;
} {
  return JSON.parse(readFileSync(new URL('package.json', OWN_ROOT), 'utf8'));
}

/** A package name for the folder (npm's rules: lower case, no spaces). */
function packageName(dir: string): string {
  const name = basename(dir)
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[._-]+/, '');
  return name || 'webhooks';
}

/** `existing` with what the scaffold needs added; nothing of the user's is changed. */
function mergePackageJson(existing: Record<string, unknown>, wanted: Record<string, unknown>): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...existing };
  for (const key of ['scripts', 'dependencies', 'devDependencies', 'allowScripts']) {
    merged[key] = { ...(wanted[key] as object), ...(existing[key] as object | undefined) };
  }
  return merged;
}

/** Writes `text` to `file`, making its folder. */
function write(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
}

/** `.env` with the hook token added, unless it has one; the token is never printed. */
function writeEnv(file: string): boolean {
  const existing = existsSync(file) ? readFileSync(file, 'utf8') : '';
  if (parseEnv(existing)[TOKEN_VARIABLE] !== undefined) return false;
  const line = `${TOKEN_VARIABLE}=${randomBytes(32).toString('base64url')}\n`;
  write(file, existing === '' || existing.endsWith('\n') ? `${existing}${line}` : `${existing}\n${line}`);
  chmodSync(file, 0o600);
  return true;
}

/** `file` (`.gitignore`) with the lines the scaffold needs appended. */
function appendLines(file: string, lines: readonly string[]): void {
  const existing = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const have = new Set(existing.split('\n').map((line) => line.trim()));
  const missing = lines.filter((line) => !have.has(line));
  if (missing.length === 0) return;
  const start = existing === '' || existing.endsWith('\n') ? existing : `${existing}\n`;
  write(file, `${start}${missing.join('\n')}\n`);
}

/**
 * `hookd init [dir] [--force]`: a folder the user owns (docs/transforms.md#a-folder-of-your-own).
 * It writes nothing when one of its files is there already (INIT_WOULD_OVERWRITE names them)
 * unless --force; package.json, `.env` and `.gitignore` are added to, never replaced.
 */
export async function initCommand(
  target: string | undefined,
  options: { force?: boolean },
  io: CliIo,
): Promise<number> {
  const dir = resolve(io.cwd, target ?? '.');
  const files = scaffoldFiles();
  const taken = Object.keys(files).filter((file) => existsSync(join(dir, file)));
  if (taken.length > 0 && !options.force) throw hookdError('INIT_WOULD_OVERWRITE', { dir, files: taken });
  const own = ownPackage();
  const scaffold: ScaffoldOptions = {
    name: packageName(dir),
    hookdRoot: fileURLToPath(OWN_ROOT).replace(/\/$/, ''),
    typescriptVersion: own.devDependencies?.typescript ?? '5.9.3',
    buildsOnInstall: Object.keys(own.allowScripts ?? {}),
  };
  for (const [file, text] of Object.entries(files)) write(join(dir, file), text);
  const pkgFile = join(dir, 'package.json');
  const wanted = packageJson(scaffold);
  const pkg = existsSync(pkgFile) ? mergePackageJson(JSON.parse(readFileSync(pkgFile, 'utf8')), wanted) : wanted;
  write(pkgFile, `${JSON.stringify(pkg, null, 2)}\n`);
  const envFile = join(dir, '.env');
  const generated = writeEnv(envFile);
  appendLines(join(dir, '.gitignore'), GITIGNORE_LINES);

  const shown = relative(io.cwd, dir) || '.';
  io.out(`hookd: wrote ${shown}/: ${[...Object.keys(files), 'package.json', '.gitignore'].join(', ')}`);
  io.out(
    generated
      ? `hookd: generated a hook token in ${envFile} (${TOKEN_VARIABLE}; not shown)`
      : `hookd: kept the hook token in ${envFile}`,
  );
  io.out('Next:');
  if (shown !== '.') io.out(`  cd ${shown}`);
  io.out(`  npm install    # hookd (from ${scaffold.hookdRoot}: not on the npm registry yet) and TypeScript`);
  io.out('  npm test       # hookd test: the example fixtures through their mapping');
  io.out('  npm start      # hookd serve; then, from another terminal:');
  io.out(
    `  curl -sS -X POST http://127.0.0.1:8787/hooks/${EXAMPLE.id} -H "Authorization: Bearer $(sed -n 's/^${TOKEN_VARIABLE}=//p' '${envFile}')" -H 'Content-Type: application/json' -d '${JSON.stringify(EXAMPLE.payload)}'`,
  );
  return 0;
}
