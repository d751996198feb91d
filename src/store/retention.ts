/**
 * The retention of everything the request log keeps (docs/operations.md#retention): the request
 * log and the kept failures share one policy — an age, a number of rows per table and a number
 * of bytes for both — applied as rows are added (a pass every eighth of a bound added), and by
 * the runtime's timer for age. Expired idempotency keys go in the same passes. A pass deletes
 * in bounded steps, so that it never holds the writer for long.
 */
export interface RetentionPolicy {
  readonly maxAgeMs: number;
  /** Rows of each table. */
  readonly maxRows: number;
  /** Bytes of both tables together, as `LogTables.size` counts them. */
  readonly maxBytes: number;
}

export type LogTable = 'requests' | 'failures';

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
  readonly requests: number;
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
const TABLES: readonly LogTable[] = ['requests', 'failures'];

/** Applies `policy` to `tables`: at most one pass at a time. */
export function createLogRetention(
  tables: LogTables,
  policy: RetentionPolicy,
  options: LogRetentionOptions = {},
): LogRetention {
  // Below eight rows, a pass after every row cuts back to the bound itself.
  const rowStep = Math.floor(policy.maxRows / STEP_DIVISOR);
  const byteStep = Math.max(1, Math.floor(policy.maxBytes / STEP_DIVISOR));
  const low = { rows: policy.maxRows - rowStep, bytes: policy.maxBytes - byteStep };
  let pending = nothingAdded();
  let running: Promise<RetentionOutcome> | undefined;

  const due = () => TABLES.some((table) => pending[table].rows >= Math.max(1, rowStep)) || total(pending) >= byteStep;
  /** What was added since last asked: a pass running under a flood cuts that too. */
  const inflow = (): Record<LogTable, Freed> => {
    const added = pending;
    pending = nothingAdded();
    return added;
  };
  const start = (): Promise<RetentionOutcome> => {
    inflow();
    const pass = runPass(tables, policy, { low, byteStep, inflow }).finally(() => {
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

const removedAny = (o: RetentionOutcome) => o.requests + o.failures + o.idempotency + o.vacuumedPages > 0;

interface PassBounds {
  /** What a pass leaves: 7/8 of each bound. */
  readonly low: { readonly rows: number; readonly bytes: number };
  readonly byteStep: number;
  /** Rows and bytes added to each table since last asked (counted by the sinks, after their commits). */
  readonly inflow: () => Record<LogTable, Freed>;
}

/**
 * One pass: age and expired keys, rows per table, bytes of both tables (each its share, oldest
 * rows first), then the file's free pages. The steps of one round go together (one group commit
 * on SQLite), and what is added meanwhile is cut too, so that a pass keeps up with a flood.
 */
async function runPass(tables: LogTables, policy: RetentionPolicy, bounds: PassBounds): Promise<RetentionOutcome> {
  const { low, byteStep } = bounds;
  const aged = await pruneAged(tables, policy.maxAgeMs);
  const deleted = { requests: aged.requests, failures: aged.failures, bytes: aged.bytes };
  bounds.inflow(); // counted by size()
  const size: Record<LogTable, LogTableSize> = { ...(await tables.size()) };
  const absorb = () => {
    const added = bounds.inflow();
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
  const overRows = (table: LogTable) => Math.min(Math.max(0, size[table].rows - low.rows), PRUNE_CHUNK_ROWS);
  for (absorb(); TABLES.some((t) => overRows(t) > 0); absorb()) if (!(await cutEach(overRows))) break;
  // Bytes: each table gives up its share of the excess, its oldest rows first, until both fit.
  const overBytes = (table: LogTable) => {
    const excess = total(size) - low.bytes;
    const { rows, bytes } = size[table];
    if (excess <= 0 || rows === 0 || bytes === 0) return 0;
    const perRow = bytes / rows;
    const share = (excess * bytes) / total(size);
    return Math.max(1, Math.min(Math.ceil(share / perRow), PRUNE_CHUNK_ROWS, Math.ceil(PRUNE_CHUNK_BYTES / perRow)));
  };
  for (absorb(); TABLES.some((t) => overBytes(t) > 0); absorb()) if (!(await cutEach(overBytes))) break;
  const vacuumedPages = (await tables.vacuum?.(byteStep, policy.maxBytes)) ?? 0;
  return { ...deleted, idempotency: aged.idempotency, vacuumedPages };
}

/** Rows past their age in both tables, and expired idempotency keys: a round of the three at a time. */
async function pruneAged(
  tables: LogTables,
  maxAgeMs: number,
): Promise<Pick<RetentionOutcome, 'requests' | 'failures' | 'bytes' | 'idempotency'>> {
  const out = { requests: 0, failures: 0, bytes: 0, idempotency: 0 };
  for (let more = true; more; ) {
    const [requests, failures, keys] = await Promise.all([
      tables.pruneOlderThan('requests', maxAgeMs, PRUNE_CHUNK_ROWS),
      tables.pruneOlderThan('failures', maxAgeMs, PRUNE_CHUNK_ROWS),
      tables.purgeExpiredKeys(PRUNE_CHUNK_ROWS),
    ]);
    out.requests += requests.rows;
    out.failures += failures.rows;
    out.bytes += requests.bytes + failures.bytes;
    out.idempotency += keys;
    more = Math.max(requests.rows, failures.rows, keys) === PRUNE_CHUNK_ROWS;
  }
  return out;
}

const total = (size: Readonly<Record<LogTable, LogTableSize>>) => size.requests.bytes + size.failures.bytes;

const nothingAdded = (): Record<LogTable, { rows: number; bytes: number }> => ({
  requests: { rows: 0, bytes: 0 },
  failures: { rows: 0, bytes: 0 },
});
