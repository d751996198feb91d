import type { Clock } from '../clock.js';
import type { Logger } from '../log.js';
import type { RetentionOutcome } from '../store/index.js';

/** How often passes under a flood (several a second) are logged, their outcomes summed. */
const REPORT_EVERY_MS = 60_000;

const NOTHING: RetentionOutcome = { requests: 0, refused: 0, failures: 0, bytes: 0, idempotency: 0, vacuumedPages: 0 };

/**
 * The log lines of the request log's retention passes (docs/operations.md#retention): what passes
 * deleted is summed and logged at most once a minute, and at every timer pass.
 */
export function createPruneReport(log: Logger, clock: Clock) {
  let unreported = NOTHING;
  let reportedAt = Number.NEGATIVE_INFINITY;
  return {
    /** Counts a pass; logs the sum when `now`, or when the last line is a minute old. */
    passed(outcome: RetentionOutcome, now = false): void {
      unreported = {
        requests: unreported.requests + outcome.requests,
        refused: unreported.refused + outcome.refused,
        failures: unreported.failures + outcome.failures,
        bytes: unreported.bytes + outcome.bytes,
        idempotency: unreported.idempotency + outcome.idempotency,
        vacuumedPages: unreported.vacuumedPages + outcome.vacuumedPages,
      };
      if (!now && clock.now() - reportedAt < REPORT_EVERY_MS) return;
      reportedAt = clock.now();
      const { idempotency: purged, ...pruned } = unreported;
      unreported = NOTHING;
      if (purged > 0) log.info({ purged }, 'expired idempotency records purged');
      // `pruned`: the request log's records, authenticated (`requests`) and refused.
      if (pruned.requests + pruned.refused + pruned.failures + pruned.vacuumedPages > 0)
        log.info({ pruned: pruned.requests + pruned.refused, ...pruned }, 'old request log records pruned');
    },
  };
}
