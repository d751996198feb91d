import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';

/**
 * Reads files that someone else may have placed (a plugin's folder, a transform's sources):
 * only a regular file, never a FIFO, device or socket (opening one must not hang the process:
 * O_NONBLOCK, then fstat), never through a symbolic link as its last part (O_NOFOLLOW: resolve
 * the path first), and never more than a bound (docs/presets.md#what-a-plugin-can-and-cannot-do).
 */

/** A file's text, or why it was not read. */
export type FileRead = { readonly text: string } | { readonly problem: string };

const FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/** What a file that is not a regular one is, for messages (`a folder`, `a device`). */
export function kindOf(stats: Stats): string {
  if (stats.isDirectory()) return 'a folder';
  if (stats.isFIFO()) return 'a FIFO';
  if (stats.isSocket()) return 'a socket';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'a device';
  return 'not a regular file';
}

/** `maxBytes` as people read it: `1 MiB`, `4,096 bytes`. */
export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  return `${bytes.toLocaleString('en')} bytes`;
}

/**
 * The UTF-8 text of `path` when it is a regular file of at most `maxBytes`; else why not (`is a
 * FIFO`). `check`, given the open file, may refuse it (its answer is the problem) or act on it
 * (a secret's mode tightened) before it is read.
 */
export function readRegularFile(
  path: string,
  maxBytes: number,
  check?: (fd: number, stats: Stats) => string | undefined,
): FileRead {
  let fd: number;
  try {
    fd = openSync(path, FLAGS);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') return { problem: 'is a symbolic link' };
    if (code === 'ENOENT') return { problem: 'does not exist' };
    if (code === 'ENXIO') return { problem: 'is a socket' };
    return { problem: `cannot be read (${code ?? (err as Error).message})` };
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) return { problem: `is ${kindOf(stats)}, not a regular file` };
    const refused = check?.(fd, stats);
    if (refused !== undefined) return { problem: refused };
    const tooLarge = { problem: `is larger than ${formatBytes(maxBytes)}, the most read` };
    if (stats.size > maxBytes) return tooLarge;
    // Read until its end, not its stated size: a file that grows while it is read is still bounded.
    const chunks: Buffer[] = [];
    const chunk = Buffer.alloc(Math.min(64 * 1024, maxBytes + 1));
    let total = 0;
    for (;;) {
      const read = readSync(fd, chunk, 0, chunk.length, null);
      if (read === 0) break;
      total += read;
      if (total > maxBytes) return tooLarge;
      chunks.push(Buffer.from(chunk.subarray(0, read)));
    }
    return { text: Buffer.concat(chunks).toString('utf8') };
  } finally {
    closeSync(fd);
  }
}
