import type { RequestLogEntry, RequestLogFilter, RequestLogRepository } from '../requests.js';

/**
 * The request log searched on SQLite (docs/runtime.md#request-log-and-replay): a `q` that is
 * rare reads every stored body, which on one statement would hold the event loop — and every
 * hook request with it — for the whole scan (100,000 records of 8 KiB bodies: about 260 ms).
 * It is read in windows of positions instead, newest first, the loop free between them.
 */

/** Records one statement reads at most: about 2 ms of 1 KiB bodies, 13 ms of 8 KiB ones. */
export const SEARCH_WINDOW_ROWS = 5000;

/** A page of `filter` (which has a `search`), read window by window until it is full or the log is read. */
export async function searchInWindows(
  requests: RequestLogRepository,
  filter: RequestLogFilter,
  windowRows = SEARCH_WINDOW_ROWS,
): Promise<RequestLogEntry[]> {
  const range = requests.seqRange();
  if (!range) return [];
  const found: RequestLogEntry[] = [];
  let before = Math.min(filter.beforeSeq ?? Number.POSITIVE_INFINITY, range.newest + 1);
  while (before > range.oldest && found.length < filter.limit) {
    const after = before - windowRows - 1;
    found.push(...requests.list({ ...filter, beforeSeq: before, afterSeq: after, limit: filter.limit - found.length }));
    before = after + 1;
    if (before > range.oldest && found.length < filter.limit) await new Promise((resume) => setImmediate(resume));
  }
  return found;
}
