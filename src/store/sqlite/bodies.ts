import {
  closeSync,
  fdatasyncSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  statSync,
  unlinkSync,
  writevSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { hookdError } from '../../errors.js';

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

interface Segment {
  readonly start: number;
  bytes: number;
  fd: number | undefined;
}

/**
 * Segment files held open at once: the one written to, and those read last (a large
 * `hooks.log.maxBytes` has thousands of segments; each open file is a descriptor).
 */
const MAX_OPEN_SEGMENTS = 16;
const SUFFIX = '.seg';
/** A segment's name: its first position, 16 hex digits (they sort as they come). */
const nameOf = (start: number) => `${start.toString(16).padStart(16, '0')}${SUFFIX}`;
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
 * The segment files of a body log: listed once from `folder`, found by position, read, grown
 * and deleted. `end()` is the log's next position: past every segment and `floor`.
 */
function segmentFiles(folder: string, segmentBytes: number, floor: number, sync: boolean) {
  let segments: Segment[] | undefined;
  let end = floor;
  /** The segments with a file open, first opened first: at most MAX_OPEN_SEGMENTS. */
  const opened: Segment[] = [];
  /** Keeps `segment` open with `fd`, closing the one opened first (never the last segment) past the cap. */
  function track(segment: Segment, fd: number): number {
    if (opened.length >= MAX_OPEN_SEGMENTS) {
      const i = opened.findIndex((s) => s !== segments?.at(-1));
      const [old] = opened.splice(i, 1);
      if (old?.fd !== undefined) closeSync(old.fd);
      if (old) old.fd = undefined;
    }
    segment.fd = fd;
    opened.push(segment);
    return fd;
  }
  function fdOf(segment: Segment): number {
    return segment.fd ?? track(segment, openSync(join(folder, nameOf(segment.start)), 'r+'));
  }
  /** Closes the file of `segment`, if open. */
  function shut(segment: Segment): void {
    if (segment.fd === undefined) return;
    closeSync(segment.fd);
    segment.fd = undefined;
    opened.splice(opened.indexOf(segment), 1);
  }
  /** The segments found on disk, read once (sized without opening them; kept once all are sized). */
  function list(): Segment[] {
    if (segments) return segments;
    const found = namesIn(folder)
      .filter((name) => /^[0-9a-f]{16}\.seg$/.test(name))
      .map((name) => ({ start: Number.parseInt(name, 16), bytes: statSync(join(folder, name)).size, fd: undefined }))
      .sort((a, b) => a.start - b.start);
    segments = found;
    const last = found.at(-1);
    if (last) end = Math.max(end, last.start + last.bytes);
    return found;
  }
  /** The segment the next write goes to: the last one, or a new one once it is full (or none ends where the log does). */
  function current(): Segment {
    const all = list();
    const last = all.at(-1);
    if (last && last.start + last.bytes === end && last.bytes < segmentBytes) return last;
    const made = mkdirSync(folder, { recursive: true, mode: 0o700 });
    const segment: Segment = { start: end, bytes: 0, fd: undefined };
    track(segment, openSync(join(folder, nameOf(end)), 'wx+', 0o600));
    // fdatasync keeps a write's bytes, not a new file's name: that is its folder's (and a folder
    // made now is a name in its parent), which a power cut could lose under a durable commit.
    if (sync) {
      const top = made === undefined ? folder : dirname(made);
      for (let dir = folder; ; dir = dirname(dir)) {
        syncFolder(dir);
        if (dir === top || dir === dirname(dir)) break;
      }
    }
    all.push(segment);
    return segment;
  }
  function at(position: number): Segment | undefined {
    const all = list();
    let low = 0;
    let high = all.length - 1;
    while (low <= high) {
      const mid = (low + high) >> 1;
      const segment = all[mid] as Segment;
      if (position < segment.start) high = mid - 1;
      else if (position >= segment.start + segment.bytes) low = mid + 1;
      else return segment;
    }
    return undefined;
  }
  /** The bytes from `from` to `to` of `segment`, or undefined when it does not hold them all. */
  function readIn(segment: Segment | undefined, from: number, to: number): Buffer | undefined {
    if (!segment || to > segment.start + segment.bytes) return undefined;
    const out = Buffer.allocUnsafe(to - from);
    let done = 0;
    while (done < out.length) {
      const n = readSync(fdOf(segment), out, done, out.length - done, from - segment.start + done);
      if (n === 0) return undefined;
      done += n;
    }
    return out;
  }
  /** `bytes` written at the end of `segment` (the last one). */
  function grow(segment: Segment, bytes: number): void {
    segment.bytes += bytes;
    end += bytes;
  }
  /** Deletes the segments that hold only bodies before `position`; answers their bytes. */
  function releaseBefore(position: number): number {
    const all = list();
    let freed = 0;
    while (all.length > 0 && (all[0] as Segment).start + (all[0] as Segment).bytes <= position) {
      const segment = all.shift() as Segment;
      shut(segment);
      unlinkSync(join(folder, nameOf(segment.start)));
      freed += segment.bytes;
    }
    return freed;
  }
  function close(): void {
    for (const segment of opened.slice()) shut(segment);
    segments = undefined;
  }
  return { end: () => end, fdOf, list, current, at, readIn, grow, releaseBefore, close };
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

/** Makes the names in `folder` durable (a file made or deleted in it). */
function syncFolder(folder: string): void {
  const fd = openSync(folder, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** The names in `folder`; none when it does not exist yet. */
function namesIn(folder: string): string[] {
  try {
    return readdirSync(folder);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}
