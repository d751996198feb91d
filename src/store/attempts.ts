import type { AttemptKind } from '../views.js';

/**
 * A failed try of a run's model call or of its delivery (docs/runtime.md#attempts), one row
 * each: a try that succeeds first time writes nothing.
 */
export interface RunAttempt {
  readonly runId: string;
  /** When the try failed (epoch milliseconds). */
  readonly at: number;
  readonly kind: AttemptKind;
  /** 1 for the first try of its call or delivery. */
  readonly n: number;
  /** The error code of the failure (`MODEL_REFUSED`, `CHANNEL_UNREACHABLE`, …). */
  readonly outcome: string;
  /** The HTTP status, when the server answered. */
  readonly status?: number;
  /** The network error, or the start of the answer's body (at most 300 characters, secrets masked). */
  readonly error?: string;
}

/** A row as the database answers it. */
export interface AttemptRow {
  run_id: string;
  at: number;
  kind: string;
  n: number;
  outcome: string;
  status: number | null;
  error: string | null;
}

/** The columns an attempt is inserted with, in `attemptRow`'s order; both stores. */
export const ATTEMPT_COLUMNS = 'run_id, at, kind, n, outcome, status, error';

/** An attempt's values for an insert. */
export function attemptRow(a: RunAttempt): unknown[] {
  return [a.runId, a.at, a.kind, a.n, a.outcome, a.status ?? null, a.error ?? null];
}

/** A row of `run_attempts` as a record. */
export function attemptOf(row: AttemptRow): RunAttempt {
  return {
    runId: row.run_id,
    at: row.at,
    kind: row.kind as AttemptKind,
    n: row.n,
    outcome: row.outcome,
    ...(row.status === null ? {} : { status: row.status }),
    ...(row.error === null ? {} : { error: row.error }),
  };
}
