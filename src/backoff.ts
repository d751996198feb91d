/** Bounds of an exponential back-off: the first wait and the longest. */
export interface BackoffBounds {
  readonly minMs: number;
  readonly maxMs: number;
}

/**
 * The wait before retry number `attempt` (0 for the first retry): `minMs` doubled per attempt,
 * never more than `maxMs`. The one back-off rule of providers, channels and the mail watcher.
 * @example backoffMs(3, { minMs: 250, maxMs: 5000 }) // 2000
 */
export function backoffMs(attempt: number, bounds: BackoffBounds): number {
  return Math.min(bounds.maxMs, bounds.minMs * 2 ** Math.max(0, attempt));
}
