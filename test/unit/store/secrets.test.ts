import { chmodSync, chownSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readOrCreateSecret } from '../../../src/store/secrets.js';
import { makeTempDir } from '../../helpers/hookd-process.js';

describe('a generated secret kept in the data folder (the gateway token)', () => {
  const temp = makeTempDir();
  afterAll(() => temp.cleanup());

  it('is made owner-only when it was not (restored from a backup), and read', () => {
    const file = join(temp.dir, 'loose-token');
    writeFileSync(file, 'kept-token\n', { mode: 0o644 });
    chmodSync(file, 0o644);
    expect(readOrCreateSecret(file)).toEqual({ value: 'kept-token', created: false });
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('is never read through a symbolic link, nor from a file another user planted', () => {
    const target = join(temp.dir, 'elsewhere');
    writeFileSync(target, 'planted\n');
    const link = join(temp.dir, 'linked-token');
    symlinkSync(target, link);
    expect(() => readOrCreateSecret(link)).toThrow(/is a symbolic link/);
    if (process.getuid?.() !== 0) return;
    // As root, a file of another user's (uid 65534, nobody) stands for a planted one.
    const planted = join(temp.dir, 'planted-token');
    writeFileSync(planted, 'attacker\n');
    chownSync(planted, 65534, 65534);
    expect(() => readOrCreateSecret(planted)).toThrow(/belongs to another user/);
  });

  it('is made anew over an empty file (a start that died before writing it), never looping', () => {
    const file = join(temp.dir, 'empty-token');
    writeFileSync(file, '');
    const made = readOrCreateSecret(file);
    expect(made.created).toBe(true);
    expect(made.value).toMatch(/^[\w-]{43}$/);
  });
});
