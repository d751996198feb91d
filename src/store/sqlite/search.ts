import type { RequestLogEntry, RequestLogFilter, RequestLogRepository } from '../requests.js';
import type { BodyLog } from './bodies.js';

/**
 * The request log searched on SQLite (docs/runtime.md#request-log-and-replay): a `q` that is
 * rare reads every stored body, which on one statement would hold the event loop — and every
 * hook request with it — for the whole scan (100,000 records of 8 KiB bodies: about 260 ms).
 * It is read in windows of positions instead, newest first, the loop free between them.
 */

/** Records one statement reads at most: about 2 ms of 1 KiB bodies, 13 ms of 8 KiB ones. */
export const SEARCH_WINDOW_ROWS = 5000;
/** Records the first window reads: its time sizes the next (64 KiB bodies: about 5 ms). */
const FIRST_WINDOW_ROWS = 64;
/** How long a window should hold the loop: each is sized by how long the last one took. */
const WINDOW_TARGET_MS = 10;

export interface SearchWindows {
  /** Records a window reads at most (SEARCH_WINDOW_ROWS). */
  readonly maxRows?: number;
  /** The clock a window's time is read on (milliseconds). */
  readonly now?: () => number;
}

/**
 * A page of `filter` (which has a `search`), read window by window until it is full or the log
 * is read. A window's rows are sized by the time the last one took (at most twice as many), so
 * that large bodies (64 KiB, the default cap: 5,000 of them were 0.55 s) hold the loop about
 * WINDOW_TARGET_MS a window, and small ones are read 5,000 at a time.
 */
export async function searchInWindows(
  requests: RequestLogRepository,
  filter: RequestLogFilter,
  windows: SearchWindows = {},
): Promise<RequestLogEntry[]> {
  const { maxRows = SEARCH_WINDOW_ROWS, now = () => performance.now() } = windows;
  const range = requests.seqRange();
  if (!range) return [];
  const found: RequestLogEntry[] = [];
  let rows = Math.min(FIRST_WINDOW_ROWS, maxRows);
  let before = Math.min(filter.beforeSeq ?? Number.POSITIVE_INFINITY, range.newest + 1);
  while (before > range.oldest && found.length < filter.limit) {
    const after = before - rows - 1;
    const started = now();
    found.push(...requests.list({ ...filter, beforeSeq: before, afterSeq: after, limit: filter.limit - found.length }));
    const took = Math.max(now() - started, 0.01);
    rows = Math.max(1, Math.min(maxRows, Math.floor(rows * Math.min(2, WINDOW_TARGET_MS / took))));
    before = after + 1;
    if (before > range.oldest && found.length < filter.limit) await new Promise((resume) => setImmediate(resume));
  }
  return found;
}

/** Finds the searched text in bodies laid out in one buffer. */
export interface BodyMatch {
  /** Whether `body` holds the text. */
  (body: Buffer): boolean;
  /** Which of `spans` (start and end in `bytes`) hold the text. */
  within(bytes: Buffer, spans: readonly (readonly [number, number])[]): boolean[];
}

/**
 * How SQLite's `CAST(body AS TEXT) LIKE '%text%'` matches, on a body's bytes: ASCII letters in
 * any case, every other byte exactly (a UTF-8 text's bytes found at a character's start, as UTF-8
 * makes them). The bytes are read as latin1 (one character each) by a regular expression whose
 * ASCII letters are classes of both cases.
 */
export function bodyMatcher(text: string): BodyMatch {
  let source = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    const c = String.fromCharCode(byte);
    const letter = (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a);
    source += letter ? `[${c.toLowerCase()}${c.toUpperCase()}]` : `\\x${byte.toString(16).padStart(2, '0')}`;
  }
  const pattern = new RegExp(source);
  const match = (body: Buffer) => pattern.test(body.toString('latin1'));
  // Each body read as a text of its own: V8 makes a short text at memory speed, and a long one
  // (a whole group's bytes, a megabyte) about twenty times slower.
  match.within = (bytes: Buffer, spans: readonly (readonly [number, number])[]) =>
    spans.map(([from, to]) => pattern.test(bytes.toString('latin1', from, to)));
  return match;
}

/** A row a search reads (`seq`, `body_at`, `body_len`, `matched`): matched by SQLite already, or its body in the body log to match. */
export type SearchCandidate = readonly [seq: number, at: number | null, bytes: number | null, matched: number];

/** Rows whose bodies are read together: at most this many… */
const GROUP_ROWS = 512;
/** …spanning at most this much of the body log. */
const GROUP_BYTES = 1024 * 1024;

/**
 * The positions (`seq`) of the first `limit` candidates, in their order, that SQLite matched or
 * whose body `matches`. Bodies are read a group at a time: consecutive rows' bodies lie next to
 * each other in the body log, so a group is one read and one scan (its rows fetched whole and
 * their bodies read one by one, 100,000 records took 1.2 s).
 */
export function findInBodies(
  candidates: readonly SearchCandidate[],
  bodies: BodyLog,
  matches: BodyMatch,
  limit: number,
): number[] {
  const hits: number[] = [];
  /** Checks candidates[from, to), newest first, adding their hits. */
  const check = (from: number, to: number) => {
    const inLog: SearchCandidate[] = [];
    for (let i = to - 1; i >= from; i--) {
      const row = candidates[i] as SearchCandidate;
      if (row[1] !== null && row[3] !== 1) inLog.push(row);
    }
    const first = inLog[0];
    const last = inLog.at(-1);
    const low = first ? (first[1] as number) : 0;
    const span = last ? bodies.readSpan(low, (last[1] as number) + (last[2] ?? 0)) : undefined;
    const spans = inLog.map(([, at, bytes]) => [(at as number) - low, (at as number) - low + (bytes ?? 0)] as const);
    const held = span
      ? matches.within(span, spans)
      : inLog.map(([, at, bytes]) => matches(bodies.read(at as number, bytes ?? 0)));
    const found = new Set(inLog.filter((_, i) => held[i]).map(([seq]) => seq));
    for (let i = from; i < to && hits.length < limit; i++) {
      const [seq, , , matched] = candidates[i] as SearchCandidate;
      if (matched === 1 || found.has(seq)) hits.push(seq);
    }
  };
  let from = 0;
  /** The end of the group's newest body (newest first: the bodies that follow lie lower). */
  let top = 0;
  for (let i = 0; i < candidates.length; i++) {
    const at = (candidates[i] as SearchCandidate)[1];
    if (i - from >= GROUP_ROWS || (at !== null && i > from && top - at > GROUP_BYTES)) {
      check(from, i);
      if (hits.length >= limit) return hits;
      from = i;
      top = 0;
    }
    if (at !== null) top = Math.max(top, at + ((candidates[i] as SearchCandidate)[2] ?? 0));
  }
  check(from, candidates.length);
  return hits;
}
