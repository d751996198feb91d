import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** Where a generated gateway token is kept: beside the SQLite file (on PostgreSQL too). */
export function gatewayTokenFile(storagePath: string): string {
  return join(dirname(storagePath), 'gateway-token');
}

/** A new random token: 32 bytes, base64url (43 characters). */
export function generateToken(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * Reads the secret stored at `file`, creating it (mode 0600) when absent.
 * `created` tells the caller whether to show it once.
 */
export function readOrCreateSecret(file: string): { value: string; created: boolean } {
  try {
    const value = readFileSync(file, 'utf8').trim();
    if (value !== '') return { value, created: false };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const value = generateToken();
  try {
    writeFileSync(file, `${value}\n`, { mode: 0o600, flag: 'wx' });
    return { value, created: true };
  } catch (err) {
    // Another process created it first: use theirs.
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return readOrCreateSecret(file);
    throw err;
  }
}
