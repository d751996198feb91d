import type { Cancel, Clock } from '../clock.js';
import type { Config } from '../config/index.js';
import type { Logger } from '../log.js';
import { createLogRetention, type StoreContract } from '../store/index.js';
import { createPruneReport } from './prune-report.js';

const PURGE_EVERY_MS = 10 * 60 * 1000;
const DAY_MS = 86_400_000;

/** The request log's pruning: as rows are added, and on a timer once started. */
export interface LogPruning {
  /** What the action sink tells of every row it adds. */
  readonly retention: ReturnType<typeof createLogRetention>;
  /** A pass now, then one every 10 minutes. */
  start(): void;
  /** No more timed passes; resolves once the pass under way ended. */
  stop(): Promise<void>;
}

/**
 * One policy for the request log, the kept failures and expired idempotency keys, applied as
 * rows are added and every 10 minutes (docs/operations.md#retention).
 */
export function createLogPruning(
  logged: Config['hooks']['log'],
  data: StoreContract,
  log: Logger,
  clock: Clock,
): LogPruning {
  const report = createPruneReport(log, clock);
  const retention = createLogRetention(
    data.log,
    {
      maxAgeMs: logged.retentionDays * DAY_MS,
      maxRows: logged.maxRows,
      maxBytes: logged.maxBytes,
      refusedShare: logged.refusedShare,
    },
    {
      onPass: (outcome) => report.passed(outcome),
      onError: (err) => log.warn({ err }, 'pruning the request log failed'),
    },
  );
  let stopPurging: Cancel | undefined;
  const purge = () => purgeOnce(retention, report, log);
  return {
    retention,
    start() {
      void purge();
      stopPurging = clock.setInterval(() => void purge(), PURGE_EVERY_MS);
    },
    async stop() {
      stopPurging?.();
      await retention.idle();
    },
  };
}

/** A timed pass, its outcome logged at once; a failure is logged, never thrown. */
async function purgeOnce(
  retention: LogPruning['retention'],
  report: ReturnType<typeof createPruneReport>,
  log: Logger,
): Promise<void> {
  try {
    report.passed(await retention.enforce(), true);
  } catch (err) {
    log.warn({ err }, 'pruning the request log failed');
  }
}
