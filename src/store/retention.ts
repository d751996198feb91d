/**
 * The retention of everything the request log keeps (docs/operations.md#retention): the request
 * log and the kept failures share one policy — an age, a number of rows per table and a number
 * of bytes for all — applied as rows are added (a pass every eighth of a bound added), and by
 * the runtime's timer for age. Expired idempotency keys go in the same passes. A pass deletes
 * in bounded steps, so that it never holds the writer for long.
 *
 * The records of requests refused at the door have a part of their own: `refusedShare` of the
 * rows and of the bytes, which they never exceed and the others never give up to them, so that
 * a flood of refusals can only push out older refusals, never an authenticated record.
 */
export interface RetentionPolicy {
  readonly maxAgeMs: number;
  /** Rows of each of `requests` (authenticated records) and `failures`. */
  readonly maxRows: number;
  /** Bytes of the three together, as `LogTables.size` counts them. */
  readonly maxBytes: number;
  /** The refused records' part of `maxRows` (in rows) and of `maxBytes`, between 0 and 1. */
  readonly refusedShare: number;
}

/**
 * `requests`: the request log's authenticated records; `refused`: its records of requests
 * refused at the door (the same table, apart in the count); `failures`: the kept failures.
 */
export type LogTable = 'requests' | 'refused' | 'failures';

/** What one step deleted; also one table's size as a pass counts it. */
export interface Freed {
  readonly rows: number;
  readonly bytes: number;
}

/** One table as a pass counts it. */
export type LogTableSize = Freed;

/**
 * What a store offers a pass: each delete takes at most `limit` rows, oldest first. Ages are
 * measured by the store's clock (PostgreSQL's own, on a shared store).
 */
export interface LogTables {
  size(): Promise<Readonly<Record<LogTable, LogTableSize>>>;
  /** Deletes up to `limit` rows made more than `maxAgeMs` ago. */
  pruneOlderThan(table: LogTable, maxAgeMs: number, limit: number): Promise<Freed>;
  /** Deletes the `count` oldest rows. */
  pruneOldest(table: LogTable, count: number): Promise<Freed>;
  /** Deletes up to `limit` expired idempotency keys; answers how many. */
  purgeExpiredKeys(limit: number): Promise<number>;
  /**
   * Gives free pages back to the file system (SQLite): those beyond `keepBytes`, and those that
   * would make the file larger than `maxFileBytes`. Answers how many pages.
   */
  vacuum?(keepBytes: number, maxFileBytes: number): Promise<number>;
}

/** What a pass did. */
export interface RetentionOutcome {
  /** Authenticated records deleted. */
  readonly requests: number;
  /** Records of refused requests deleted. */
  readonly refused: number;
  readonly failures: number;
  /** Bytes of the rows deleted. */
  readonly bytes: number;
  readonly idempotency: number;
  /** Pages given back to the file system. */
  readonly vacuumedPages: number;
}

/** The policy applied to a store's log tables. */
export interface LogRetention {
  /** Runs a pass now (after the one in progress, if any). */
  enforce(): Promise<RetentionOutcome>;
  /** Told of rows committed to a log table: a pass starts once an eighth of a bound has been added. */
  added(table: LogTable, rows: number, bytes: number): void;
  /** Resolves once no pass is running (the store may then be closed). */
  idle(): Promise<void>;
}

export interface LogRetentionOptions {
  /** Told of every pass that deleted something. */
  readonly onPass?: (outcome: RetentionOutcome) => void;
  /** Told of a pass that failed (the next one tries again). */
  readonly onError?: (err: unknown) => void;
}

/** A pass keeps each bound's last eighth free, so that the rows added until the next pass fit. */
const STEP_DIVISOR = 8;
/** Rows deleted per step. */
export const PRUNE_CHUNK_ROWS = 1000;
/** Bytes deleted per step, about: a step that frees 64 KiB bodies takes fewer rows. */
const PRUNE_CHUNK_BYTES = 8 * 1024 * 1024;
const TABLES: readonly LogTable[] = ['requests', 'refused', 'failures'];

/** Tables that share one byte bound: a table over it gives up its share of the excess. */
interface BytePool {
  readonly tables: readonly LogTable[];
  readonly maxBytes: number;
}

/** A policy's bounds, table by table and pool by pool. */
interface Bounds {
  readonly maxRows: Readonly<Record<LogTable, number>>;
  readonly pools: readonly BytePool[];
}

/** The bounds of a policy: refused records in a pool of their own, `refusedShare` of each bound. */
function boundsOf(policy: RetentionPolicy): Bounds {
  const refusedRows = Math.max(1, Math.floor(policy.maxRows * policy.refusedShare));
  const refusedBytes = Math.max(1, Math.floor(policy.maxBytes * policy.refusedShare));
  return {
    maxRows: { requests: policy.maxRows, refused: refusedRows, failures: policy.maxRows },
    pools: [
      { tables: ['requests', 'failures'], maxBytes: Math.max(1, policy.maxBytes - refusedBytes) },
      { tables: ['refused'], maxBytes: refusedBytes },
    ],
  };
}

/** What is added before a pass is due: an eighth of a bound (below eight rows, a pass after every row). */
const stepOf = (bound: number) => Math.max(1, Math.floor(bound / STEP_DIVISOR));

/** Applies `policy` to `tables`: at most one pass at a time. */
export function createLogRetention(
  tables: LogTables,
  policy: RetentionPolicy,
  options: LogRetentionOptions = {},
): LogRetention {
  const bounds = boundsOf(policy);
  let pending = nothingAdded();
  let running: Promise<RetentionOutcome> | undefined;

  const due = () =>
    TABLES.some((table) => pending[table].rows >= stepOf(bounds.maxRows[table])) ||
    bounds.pools.some((pool) => total(pending, pool.tables) >= stepOf(pool.maxBytes));
  /** What was added since last asked: a pass running under a flood cuts that too. */
  const inflow = (): Record<LogTable, Freed> => {
    const added = pending;
    pending = nothingAdded();
    return added;
  };
  const start = (): Promise<RetentionOutcome> => {
    inflow();
    const pass = runPass(tables, policy, bounds, inflow).finally(() => {
      if (running === pass) running = undefined;
      // Rows added since the pass last looked may make the next one due already.
      if (running === undefined && due()) background();
    });
    running = pass;
    return pass;
  };
  const background = () => {
    start().then(
      (outcome) => {
        if (removedAny(outcome)) options.onPass?.(outcome);
      },
      (err: unknown) => options.onError?.(err),
    );
  };

  return {
    async enforce() {
      while (running) await running.catch(() => undefined);
      return start();
    },
    added(table, rows, bytes) {
      pending[table].rows += rows;
      pending[table].bytes += bytes;
      if (running === undefined && due()) background();
    },
    async idle() {
      while (running) await running.catch(() => undefined);
    },
  };
}

const removedAny = (o: RetentionOutcome) => o.requests + o.refused + o.failures + o.idempotency + o.vacuumedPages > 0;

/**
 * One pass: age and expired keys, rows per table, bytes of each pool (each table its share,
 * oldest rows first), then the file's free pages. Each bound is cut to 7/8 of itself. The
 * steps of one round go together (one group commit on SQLite), and what is added meanwhile
 * (`inflow`, counted by the sinks after their commits) is cut too, so that a pass keeps up
 * with a flood.
 */
async function runPass(
  tables: LogTables,
  policy: RetentionPolicy,
  bounds: Bounds,
  inflow: () => Record<LogTable, Freed>,
): Promise<RetentionOutcome> {
  const aged = await pruneAged(tables, policy.maxAgeMs);
  const deleted = { ...aged };
  inflow(); // counted by size()
  const size: Record<LogTable, LogTableSize> = { ...(await tables.size()) };
  const absorb = () => {
    const added = inflow();
    for (const table of TABLES)
      size[table] = { rows: size[table].rows + added[table].rows, bytes: size[table].bytes + added[table].bytes };
  };
  /** Cuts `count(table)` rows of each table that has some to cut, together; false when nothing was cut. */
  const cutEach = async (count: (table: LogTable) => number): Promise<boolean> => {
    const cuts = TABLES.map((table) => [table, count(table)] as const).filter(([, n]) => n > 0);
    const freed = await Promise.all(cuts.map(([table, n]) => tables.pruneOldest(table, n)));
    for (const [i, [table]] of cuts.entries()) {
      const { rows, bytes } = freed[i] as Freed;
      deleted[table] += rows;
      deleted.bytes += bytes;
      size[table] = { rows: Math.max(0, size[table].rows - rows), bytes: Math.max(0, size[table].bytes - bytes) };
    }
    return freed.some((f) => f.rows > 0);
  };
  const low = (bound: number) => bound - stepOf(bound);
  const overRows = (table: LogTable) =>
    Math.min(Math.max(0, size[table].rows - low(bounds.maxRows[table])), PRUNE_CHUNK_ROWS);
  for (absorb(); TABLES.some((t) => overRows(t) > 0); absorb()) if (!(await cutEach(overRows))) break;
  const poolOf = new Map(bounds.pools.flatMap((pool) => pool.tables.map((table) => [table, pool] as const)));
  // Bytes: each table of a pool over its bound gives up its share of the excess, oldest rows first.
  const overBytes = (table: LogTable) => {
    const pool = poolOf.get(table) as BytePool;
    const pooled = total(size, pool.tables);
    const excess = pooled - low(pool.maxBytes);
    const { rows, bytes } = size[table];
    if (excess <= 0 || rows === 0 || bytes === 0) return 0;
    const perRow = bytes / rows;
    const share = (excess * bytes) / pooled;
    return Math.max(1, Math.min(Math.ceil(share / perRow), PRUNE_CHUNK_ROWS, Math.ceil(PRUNE_CHUNK_BYTES / perRow)));
  };
  for (absorb(); TABLES.some((t) => overBytes(t) > 0); absorb()) if (!(await cutEach(overBytes))) break;
  const vacuumedPages = (await tables.vacuum?.(stepOf(policy.maxBytes), policy.maxBytes)) ?? 0;
  return { ...deleted, vacuumedPages };
}

/** Rows past their age in every table, and expired idempotency keys: a round of them all at a time. */
async function pruneAged(tables: LogTables, maxAgeMs: number): Promise<Omit<RetentionOutcome, 'vacuumedPages'>> {
  const out = { requests: 0, refused: 0, failures: 0, bytes: 0, idempotency: 0 };
  for (let more = true; more; ) {
    const [keys, ...freed] = await Promise.all([
      tables.purgeExpiredKeys(PRUNE_CHUNK_ROWS),
      ...TABLES.map((table) => tables.pruneOlderThan(table, maxAgeMs, PRUNE_CHUNK_ROWS)),
    ]);
    more = keys === PRUNE_CHUNK_ROWS;
    for (const [i, table] of TABLES.entries()) {
      const { rows, bytes } = freed[i] as Freed;
      out[table] += rows;
      out.bytes += bytes;
      if (rows === PRUNE_CHUNK_ROWS) more = true;
    }
    out.idempotency += keys as number;
  }
  return out;
}

const total = (size: Readonly<Record<LogTable, LogTableSize>>, of: readonly LogTable[] = TABLES) =>
  of.reduce((sum, table) => sum + size[table].bytes, 0);

const nothingAdded = (): Record<LogTable, { rows: number; bytes: number }> => ({
  requests: { rows: 0, bytes: 0 },
  refused: { rows: 0, bytes: 0 },
  failures: { rows: 0, bytes: 0 },
});
