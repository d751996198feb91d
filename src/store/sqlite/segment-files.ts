import {
  closeSync,
  constants,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  statSync,
  unlinkSync,
} from 'node:fs';
import { dirname, join } from 'node:path';

/** A segment of a body log (bodies.ts): the position it starts at, its size, its open file. */
export interface Segment {
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

/**
 * The segment files of a body log: listed once from `folder`, found by position, read, grown
 * and deleted. `end()` is the log's next position: past every segment and `floor`.
 */
export function segmentFiles(folder: string, segmentBytes: number, floor: number, sync: boolean) {
  let segments: Segment[] | undefined;
  let end = floor;
  const files = openFiles(folder, (segment) => segment === segments?.at(-1));
  const { fdOf, shut } = files;
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
    files.track(segment, openSync(join(folder, nameOf(end)), 'wx+', 0o600));
    // fdatasync keeps a write's bytes, not a new file's name: that is its folder's (and a folder
    // made now is a name in its parent), which a power cut could lose under a durable commit.
    if (sync) syncFoldersUp(folder, made === undefined ? folder : dirname(made));
    all.push(segment);
    return segment;
  }
  const at = (position: number): Segment | undefined => segmentAt(list(), position);
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
    files.closeAll();
    segments = undefined;
  }
  return { end: () => end, fdOf, list, current, at, readIn, grow, releaseBefore, close };
}

/**
 * The open files of a log's segments: each opened when first read or written, at most
 * MAX_OPEN_SEGMENTS at once (past it, the one opened first is closed, never the one `written`).
 */
function openFiles(folder: string, written: (segment: Segment) => boolean) {
  /** The segments with a file open, first opened first. */
  const opened: Segment[] = [];
  /** Keeps `segment` open with `fd`. */
  function track(segment: Segment, fd: number): number {
    if (opened.length >= MAX_OPEN_SEGMENTS) {
      const [old] = opened.splice(
        opened.findIndex((s) => !written(s)),
        1,
      );
      if (old?.fd !== undefined) closeSync(old.fd);
      if (old) old.fd = undefined;
    }
    segment.fd = fd;
    opened.push(segment);
    return fd;
  }
  /** Closes the file of `segment`, if open. */
  function shut(segment: Segment): void {
    if (segment.fd === undefined) return;
    closeSync(segment.fd);
    segment.fd = undefined;
    opened.splice(opened.indexOf(segment), 1);
  }
  return {
    track,
    shut,
    // Never through a symbolic link: one planted in a shared folder would take the bodies elsewhere.
    fdOf: (segment: Segment): number =>
      segment.fd ?? track(segment, openSync(join(folder, nameOf(segment.start)), EXISTING_SEGMENT)),
    closeAll: () => {
      for (const segment of opened.slice()) shut(segment);
    },
  };
}

/** The segment of `all` (in order) that holds `position`. */
function segmentAt(all: readonly Segment[], position: number): Segment | undefined {
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

/** Syncs `folder` and each folder above it up to `top`: the names of a file, and of folders, made in them. */
function syncFoldersUp(folder: string, top: string): void {
  for (let dir = folder; ; dir = dirname(dir)) {
    syncFolder(dir);
    if (dir === top || dir === dirname(dir)) return;
  }
}

/** An existing segment, opened for reading and writing, not through a symbolic link. */
const EXISTING_SEGMENT = constants.O_RDWR | (constants.O_NOFOLLOW ?? 0);

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
