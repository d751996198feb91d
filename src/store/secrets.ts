import { randomBytes } from 'node:crypto';
import { fchmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { hookdError } from '../errors.js';
import { readRegularFile } from '../read-file.js';

/** Where a generated gateway token is kept: beside the SQLite file (on PostgreSQL too). */
export function gatewayTokenFile(storagePath: string): string {
  return join(dirname(storagePath), 'gateway-token');
}

/** A new random token: 32 bytes, base64url (43 characters). */
export function generateToken(): string {
  return randomBytes(32).toString('base64url');
}

/** A kept secret is a line: a file past this is not one. */
const MAX_SECRET_BYTES = 4096;

/** The secret kept at `file`, read by readRegularFile with `check`; undefined when there is none. */
function readKept(file: string, check?: Parameters<typeof readRegularFile>[2]): string | undefined {
  const read = readRegularFile(file, MAX_SECRET_BYTES, check);
  if ('text' in read) return read.text.trim();
  if (read.problem === 'does not exist') return undefined;
  // Not a problem of the configuration: the file is in the data folder, and its text is not shown.
  throw hookdError('SECRET_UNREADABLE', { file, problem: read.problem });
}

/**
 * The secret kept at `file`, when there is one: only a regular file of this process's user (a
 * token another local user planted in a shared folder would open the admin API to them), never
 * through a symbolic link, made owner-only (0600) when it was not (restored from a backup).
 */
const readSecretFile = (file: string) =>
  readKept(file, (fd, stats) => {
    if (process.getuid && stats.uid !== process.getuid())
      return `belongs to another user (uid ${stats.uid}): remove it, or make it this user's`;
    if ((stats.mode & 0o077) !== 0) fchmodSync(fd, 0o600);
    return undefined;
  });

/**
 * The gateway's secret at `file` as a client of the gateway reads it (the CLI, as root or as the
 * service's user): a regular file of at most 4 KiB, never through a symbolic link (which would
 * send another file's text as the token) nor a FIFO (which would hang the command); its owner
 * and mode are the gateway's business. Undefined when there is none, or it is empty.
 */
export const readSecretAsClient = (file: string): string | undefined => readKept(file) || undefined;

/**
 * Reads the secret stored at `file` (`readSecretFile`), creating it (mode 0600) when absent.
 * `created` tells the caller whether to show it once.
 */
export function readOrCreateSecret(file: string): { value: string; created: boolean } {
  const kept = readSecretFile(file);
  if (kept !== undefined && kept !== '') return { value: kept, created: false };
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const value = generateToken();
  try {
    // An empty file (a start that died between making it and writing it) is written over; else
    // only a new one is made, and another process's, made first, is used.
    writeFileSync(file, `${value}\n`, { mode: 0o600, flag: kept === '' ? 'w' : 'wx' });
    return { value, created: true };
  } catch (err) {
    // Another process created it first: use theirs.
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return readOrCreateSecret(file);
    throw err;
  }
}
