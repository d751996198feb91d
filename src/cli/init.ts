import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  existsSync,
  fchmodSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
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

/**
 * Writes `text` to `file`, making its folder, never through a symbolic link (one planted in its
 * place, dangling or not, is replaced).
 */
function write(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true });
  if (present(file) && lstatSync(file).isSymbolicLink()) unlinkSync(file);
  writeFileSync(file, text);
}

/** True when anything is at `file`: a dangling symbolic link too, which `existsSync` calls absent. */
function present(file: string): boolean {
  try {
    lstatSync(file);
    return true;
  } catch {
    return false;
  }
}

/** Opens a `.env` that is there for appending, never through a symlink, without waiting on a FIFO. */
const EXISTING_ENV = constants.O_RDWR | constants.O_APPEND | constants.O_NOFOLLOW | constants.O_NONBLOCK;
/** Creates `.env` 0600 from the start (never 0666 then chmod), failing when anything is there, a dangling symlink included. */
const NEW_ENV = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/** Why hookd will not write the token into the `.env` at `file` (open on `fd`); undefined when it may. */
function unsafeEnv(fd: number): string | undefined {
  const stats = fstatSync(fd);
  if (!stats.isFile()) return 'is not a regular file';
  if (process.getuid && stats.uid !== process.getuid()) return 'belongs to another user';
  if (stats.nlink > 1) return 'has other hard links';
  return undefined;
}

/** Opens the `.env` that is there; throws INIT_ENV_REFUSED when it may not be written. */
function openExistingEnv(file: string): number {
  let fd: number;
  try {
    fd = openSync(file, EXISTING_ENV);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') throw hookdError('INIT_ENV_REFUSED', { file, reason: 'is a symbolic link' });
    if (code === 'ENXIO') throw hookdError('INIT_ENV_REFUSED', { file, reason: 'is not a regular file' });
    throw err;
  }
  const reason = unsafeEnv(fd);
  if (reason) {
    closeSync(fd);
    throw hookdError('INIT_ENV_REFUSED', { file, reason });
  }
  return fd;
}

/** Throws INIT_ENV_REFUSED when a `.env` is there that `writeEnv` would refuse: checked before anything is written. */
function checkEnv(file: string): void {
  if (!existsSync(file) && !isSymlink(file)) return;
  closeSync(openExistingEnv(file));
}

const isSymlink = (file: string) => {
  try {
    return lstatSync(file).isSymbolicLink();
  } catch {
    return false;
  }
};

/**
 * `.env` with the hook token added, unless it has one; the token is never printed. A new `.env`
 * is created 0600 with O_EXCL | O_NOFOLLOW; one that is there is appended to only when it is a
 * regular file of the user's, not a symlink nor a hard link, and made 0600
 * (docs/transforms.md#a-folder-of-your-own).
 */
function writeEnv(file: string): boolean {
  const line = `${TOKEN_VARIABLE}=${randomBytes(32).toString('base64url')}\n`;
  let fd: number;
  try {
    fd = openSync(file, NEW_ENV, 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    fd = openExistingEnv(file);
    try {
      const existing = readFileSync(fd, 'utf8');
      if (parseEnv(existing)[TOKEN_VARIABLE] !== undefined) return false;
      writeSync(fd, existing === '' || existing.endsWith('\n') ? line : `\n${line}`);
      fchmodSync(fd, 0o600);
      return true;
    } finally {
      closeSync(fd);
    }
  }
  try {
    writeSync(fd, line);
  } finally {
    closeSync(fd);
  }
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

/** The folder's package.json, or CONFIG_INVALID naming it when it is not JSON. */
function readPackageJson(file: string): Parameters<typeof mergePackageJson>[0] {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw hookdError('CONFIG_INVALID', { problems: [`${file} is not JSON: ${(err as Error).message}`], file });
  }
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
  const taken = Object.keys(files).filter((file) => present(join(dir, file)));
  if (taken.length > 0 && !options.force) throw hookdError('INIT_WOULD_OVERWRITE', { dir, files: taken });
  const envFile = join(dir, '.env');
  checkEnv(envFile);
  const own = ownPackage();
  const scaffold: ScaffoldOptions = {
    name: packageName(dir),
    hookdRoot: fileURLToPath(OWN_ROOT).replace(/\/$/, ''),
    typescriptVersion: own.devDependencies?.typescript ?? '5.9.3',
    buildsOnInstall: Object.keys(own.allowScripts ?? {}),
  };
  // The package.json there is read before anything is written: one that is not JSON stops init
  // with nothing half made.
  const pkgFile = join(dir, 'package.json');
  const wanted = packageJson(scaffold);
  const pkg = existsSync(pkgFile) ? mergePackageJson(readPackageJson(pkgFile), wanted) : wanted;
  for (const [file, text] of Object.entries(files)) write(join(dir, file), text);
  write(pkgFile, `${JSON.stringify(pkg, null, 2)}\n`);
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
