/** Something waiting for a slot, as the fair queue orders it. */
export interface Queued {
  /** Arrival order: the older goes first within its source. */
  readonly seq: number;
  /** What it is fair across: a mapping's id, `agent`, `heartbeat`. */
  readonly source: string;
  /** Its destination's key (`model:openai/gpt-4o`, `channel:ops`), or '' for none. */
  readonly key: string;
  /** A run not started yet; started runs' next tries go before their source's new runs. */
  readonly start: boolean;
  /** False while it may not go whatever the slots say (an earlier run of its session is under way). */
  readonly ready?: (() => boolean) | undefined;
  /** True while it is in the queue. */
  queued: boolean;
}

/** Which waiting entries may be granted now. */
export interface Admission<E extends Queued> {
  /** True when the destination `key` takes a try now (its breaker and its slots). */
  target(key: string): boolean;
  /** True when the entry fits the run slots and its source's limit (the same for every entry of its source). */
  slots(entry: E): boolean;
  /** True when a new run may start now (the spacing under ingress pressure). */
  starts(): boolean;
}

/** A list read from `head`: granting is almost always at the head, and shifting is O(n). */
interface Line<E> {
  items: E[];
  head: number;
}

interface SourceLines<E> {
  readonly tries: Map<string, Line<E>>;
  readonly starts: Map<string, Line<E>>;
}

/** Sources whose turn is remembered while they have nothing queued (mappings are few; this bounds the rest). */
const MAX_TURNS = 4096;

/** When each source was last served (a count of grants); one never served goes first. */
type Turns = Map<string, number>;

/**
 * Waiting entries, taken fairly (docs/runtime.md#fairness): sources in turn, the one served
 * longest ago (or never) first; within a source, started runs' tries before new runs, the oldest that may
 * go. Entries are kept per source and destination, so that a destination that takes nothing (an
 * open breaker, full slots) is skipped whole, however many wait for it.
 */
export interface FairQueue<E extends Queued> {
  add(entry: E): void;
  /** Takes `entry` out without granting it; false when it was not queued. */
  remove(entry: E): boolean;
  /** The next entry to grant, left in the queue (`take` it). */
  next(admission: Admission<E>): E | undefined;
  /** Takes a granted entry out; its source goes to the back of the turn. */
  take(entry: E): void;
  /** Entries waiting. */
  readonly size: number;
  /** Entries waiting for the destination `key`. */
  waitingFor(key: string): number;
}

/**
 * The first entry of `line` that may go: none when the slots refuse its head (they answer the
 * same for the whole line: one source, one destination), else the first one ready.
 */
function firstIn<E extends Queued>(line: Line<E>, admission: Admission<E>): E | undefined {
  while (line.head < line.items.length && !(line.items[line.head] as E).queued) line.head++;
  const head = line.items[line.head];
  if (!head || !admission.slots(head)) return undefined;
  for (let i = line.head; i < line.items.length; i++) {
    const entry = line.items[i] as E;
    if (entry.queued && (entry.ready?.() ?? true)) return entry;
  }
  return undefined;
}

/** The oldest entry of these lines that may go now. */
function oldestIn<E extends Queued>(lines: Map<string, Line<E>>, admission: Admission<E>): E | undefined {
  let best: E | undefined;
  for (const [key, line] of lines) {
    if (key !== '' && !admission.target(key)) continue;
    const entry = firstIn(line, admission);
    if (entry && (!best || entry.seq < best.seq)) best = entry;
  }
  return best;
}

/** The lines `entry` goes in: its source's tries or starts, made when `make` and missing. */
function linesOf<E extends Queued>(
  sources: Map<string, SourceLines<E>>,
  entry: E,
  make: boolean,
): Map<string, Line<E>> | undefined {
  let lines = sources.get(entry.source);
  if (!lines && make) {
    lines = { tries: new Map(), starts: new Map() };
    sources.set(entry.source, lines);
  }
  return lines && (entry.start ? lines.starts : lines.tries);
}

/** Takes `entry` out of its line; an empty line, and a source left without lines, go. */
function drop<E extends Queued>(sources: Map<string, SourceLines<E>>, entry: E): void {
  const lines = linesOf(sources, entry, false);
  const line = lines?.get(entry.key);
  if (!lines || !line) return;
  const at = line.items.indexOf(entry, line.head);
  if (at === line.head) line.head++;
  else if (at > line.head) line.items.splice(at, 1);
  if (line.head > 1024 && line.head * 2 > line.items.length) {
    line.items = line.items.slice(line.head);
    line.head = 0;
  }
  if (line.head >= line.items.length) lines.delete(entry.key);
  const source = sources.get(entry.source);
  if (source && source.tries.size === 0 && source.starts.size === 0) sources.delete(entry.source);
}

/** Creates an empty fair queue. */
export function createFairQueue<E extends Queued>(): FairQueue<E> {
  const sources = new Map<string, SourceLines<E>>();
  const byKey = new Map<string, number>();
  const served: Turns = new Map();
  let grants = 0;
  let size = 0;
  /** Takes `entry` out, counted out of its key. */
  const out = (entry: E) => {
    entry.queued = false;
    size--;
    const n = (byKey.get(entry.key) ?? 0) - 1;
    if (n === 0) byKey.delete(entry.key);
    else byKey.set(entry.key, n);
    drop(sources, entry);
  };

  return {
    add(entry) {
      const lines = linesOf(sources, entry, true) as Map<string, Line<E>>;
      let line = lines.get(entry.key);
      if (!line) {
        line = { items: [], head: 0 };
        lines.set(entry.key, line);
      }
      entry.queued = true;
      line.items.push(entry);
      size++;
      byKey.set(entry.key, (byKey.get(entry.key) ?? 0) + 1);
    },
    remove(entry) {
      if (!entry.queued) return false;
      out(entry);
      return true;
    },
    next(admission) {
      let best: E | undefined;
      let bestTurn = Number.POSITIVE_INFINITY;
      const starts = admission.starts();
      for (const [source, lines] of sources) {
        const turn = served.get(source) ?? -1;
        if (turn >= bestTurn) continue;
        const entry = oldestIn(lines.tries, admission) ?? (starts ? oldestIn(lines.starts, admission) : undefined);
        if (!entry) continue;
        best = entry;
        bestTurn = turn;
      }
      return best;
    },
    take(entry) {
      if (!entry.queued) return;
      out(entry);
      // Served: its source waits for every other source's turn before its next.
      served.set(entry.source, grants++);
      if (served.size > MAX_TURNS) for (const source of served.keys()) if (!sources.has(source)) served.delete(source);
    },
    get size() {
      return size;
    },
    waitingFor: (key) => byKey.get(key) ?? 0,
  };
}
