import type { AlertCondition } from '../../alert-views.js';

/** Failure times a watch keeps at most (a count in the window beyond it reads as this many). */
export const MAX_TIMES = 1000;

/** The open firing a node knows of, and whether it saw the condition itself. */
export interface OpenAlert {
  readonly id: string;
  readonly at: number;
  /**
   * True once this node counted failures of its source since it opened: only then does a quiet
   * window close it (another node may still see the failures, docs/operations.md#alerts).
   */
  observed: boolean;
}

/** What one node knows of one condition and source (docs/operations.md#alerts). */
export interface Watch {
  readonly condition: AlertCondition;
  readonly source: string;
  readonly count: number;
  readonly windowMs: number;
  /** Times of the failures within the window, oldest first (count conditions). */
  times: number[];
  /** Failures since the last success or recovery. */
  failures: number;
  /** modelUnreachable: when the failing streak began (the first failed try after a success). */
  since?: number;
  lastFailureAt?: number;
  lastError?: string;
  /** The console page of the last failure (`#/requests/ID`, `#/runs/ID`, …). */
  page: string;
  open?: OpenAlert;
  /** When this node last knew of a firing of it (its own, or one another node stored). */
  lastFiredAt?: number;
  /** Store reads and writes and sends, one after another. */
  busy: Promise<void>;
  /** Steps queued on `busy` and not done. */
  queued: number;
  /** A firing is queued and has not started. */
  firing: boolean;
}

/** A new, quiet watch. */
export function createWatch(
  condition: AlertCondition,
  source: string,
  threshold: { readonly count: number; readonly windowMs: number },
): Watch {
  return {
    condition,
    source,
    ...threshold,
    times: [],
    failures: 0,
    page: '#/requests',
    busy: Promise.resolve(),
    queued: 0,
    firing: false,
  };
}

/** Leaves out the failure times older than the window. */
export function prune(watch: Watch, now: number): void {
  const from = now - watch.windowMs;
  let drop = 0;
  while (drop < watch.times.length && (watch.times[drop] as number) <= from) drop++;
  if (drop > 0) watch.times.splice(0, drop);
}

/** Counts a failure at `now`. */
export function countFailure(watch: Watch, now: number, error: string, page: string | undefined): void {
  if (watch.condition === 'modelUnreachable') {
    if (watch.since === undefined) {
      watch.since = now;
      watch.failures = 0;
    }
  } else {
    prune(watch, now);
    watch.times.push(now);
    if (watch.times.length > MAX_TIMES) watch.times.shift();
  }
  watch.failures++;
  watch.lastFailureAt = now;
  watch.lastError = error;
  if (page !== undefined) watch.page = page;
  if (watch.open) watch.open.observed = true;
}

/**
 * True when the condition holds at `now`: `count` failures within the window, or (the model) no
 * successful try since a failed one at least a window ago.
 */
export function isActive(watch: Watch, now: number): boolean {
  if (watch.condition === 'modelUnreachable') return watch.since !== undefined && now - watch.since >= watch.windowMs;
  prune(watch, now);
  return watch.times.length >= watch.count;
}

/** True when an open alert it observed has seen no failure for a whole window (never for the model). */
export function isQuiet(watch: Watch, now: number): boolean {
  if (watch.condition === 'modelUnreachable' || !watch.open?.observed) return false;
  return watch.lastFailureAt === undefined || now - watch.lastFailureAt >= watch.windowMs;
}

/** True when nothing is kept for it: no open alert, no failure in the window, nothing in flight. */
export function isIdle(watch: Watch, now: number): boolean {
  if (watch.open || watch.queued > 0 || watch.since !== undefined) return false;
  prune(watch, now);
  return watch.times.length === 0;
}

/** How many failures the firing names: those in the window, or the failed tries of the streak. */
export function countOf(watch: Watch): number {
  return watch.condition === 'modelUnreachable' ? watch.failures : watch.times.length;
}
