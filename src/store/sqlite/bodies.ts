import { fdatasyncSync, writevSync } from 'node:fs';
import { hookdError } from '../../errors.js';
import { segmentFiles } from './segment-files.js';

/**
 * The request log's bodies on SQLite (docs/operations.md#commits-and-checkpoints): appended to
 * segment files beside the database, one write per group commit, instead of into its pages. In
 * the database a body is written twice (to the WAL, then copied into the file) with the b-tree
 * pages around it; here once, in order. A record keeps its body's position in the log (a byte
 * offset over every segment, never reused) and its length.
 *
 * Crash-safe by order: a commit's bodies are written before its rows commit (inside the
 * transaction), so a committed row's body is always there; bytes of a commit that never
 * happened stay unread, and are dropped with their segment.
 */
export interface BodyLog {
  /** Queues `body` for the write before the next commit; answers its position. */
  append(body: Buffer): number;
  /** Writes what was appended since the last write (before the commit); throws when it could not. */
  flush(): void;
  /** Forgets what was appended and not written (the transaction rolled back). */
  discard(): void;
  /** The body at `position`, `bytes` long; empty when its segment is gone (a database restored without them). */
  read(position: number, bytes: number): Buffer;
  /** The bytes from `from` to `to` in one read, when one segment holds them all; else undefined. */
  readSpan(from: number, to: number): Buffer | undefined;
  /** Deletes the segments that hold only bodies before `position`; answers their bytes. */
  releaseBefore(position: number): number;
  /** Bytes of the segments on disk. */
  bytes(): number;
  close(): void;
}

export interface BodyLogOptions {
  /** The folder of the segments (made when the first body is written, owner-only). */
  readonly folder: string;
  /** A segment past this size ends; the next commit starts a new one. */
  readonly segmentBytes: number;
  /** The first position to use, at least: past every position the database refers to. */
  readonly floor: number;
  /** fdatasync each write, and sync the folder's names as segments are made (`storage.synchronous: full`). */
  readonly sync?: boolean;
}

/**
 * The segment size for a log bound of `maxBytes`: a sixty-fourth of it (the space a pruned
 * segment's first bodies hold until it goes, beside the eighth of the bound a pass leaves
 * free), between 256 KiB and 16 MiB.
 */
export function bodySegmentBytesFor(maxBytes: number): number {
  return Math.min(16 * 1024 * 1024, Math.max(256 * 1024, Math.floor(maxBytes / 64)));
}

const EMPTY = Buffer.alloc(0);

/** The body log in segment files under `options.folder`; nothing is touched before its first use. */
export function openBodyLog(options: BodyLogOptions): BodyLog {
  const files = segmentFiles(options.folder, options.segmentBytes, options.floor, options.sync ?? false);
  let pending: Buffer[] = [];
  let pendingBytes = 0;

  const readPending = (position: number, bytes: number): Buffer => {
    let at = files.end();
    for (const body of pending) {
      if (position === at) return body.subarray(0, bytes);
      at += body.length;
    }
    return EMPTY;
  };

  return {
    append(body) {
      files.list();
      pending.push(body);
      pendingBytes += body.length;
      return files.end() + pendingBytes - body.length;
    },
    flush() {
      if (pendingBytes === 0) return;
      const bodies = pending;
      const bytes = pendingBytes;
      pending = [];
      pendingBytes = 0;
      const segment = files.current();
      const fd = files.fdOf(segment);
      writeAll(fd, bodies, segment.bytes);
      if (options.sync) fdatasyncSync(fd);
      files.grow(segment, bytes);
    },
    discard() {
      pending = [];
      pendingBytes = 0;
    },
    read(position, bytes) {
      if (bytes === 0) return EMPTY;
      files.list();
      if (position >= files.end()) return readPending(position, bytes);
      return files.readIn(files.at(position), position, position + bytes) ?? EMPTY;
    },
    readSpan(from, to) {
      files.list();
      return to <= files.end() ? files.readIn(files.at(from), from, to) : undefined;
    },
    releaseBefore: files.releaseBefore,
    bytes() {
      return files.list().reduce((sum, segment) => sum + segment.bytes, 0);
    },
    close: files.close,
  };
}

/**
 * Writes every byte of `buffers` at `position`: a short write goes on from where it stopped, so
 * that a disk out of room throws its ENOSPC (a 503 `STORE_UNAVAILABLE` for the accept).
 */
function writeAll(fd: number, buffers: readonly Buffer[], position: number): void {
  let list = buffers;
  let at = position;
  for (;;) {
    let written = writevSync(fd, list as Buffer[], at);
    if (written === 0) throw hookdError('STORE_UNAVAILABLE');
    at += written;
    let i = 0;
    while (i < list.length && written >= (list[i] as Buffer).length) written -= (list[i++] as Buffer).length;
    if (i === list.length) return;
    list = [(list[i] as Buffer).subarray(written), ...list.slice(i + 1)];
  }
}
