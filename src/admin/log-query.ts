import { hookdError } from '../errors.js';
import type { RequestLogFilter, RunListFilter } from '../store/index.js';
import { RUN_STATUSES } from '../views.js';

/**
 * The query strings of the admin API's lists (docs/runtime.md#request-log-and-replay): each
 * parameter checked, a bad one 400 `INVALID_FIELD` naming it and what it takes.
 */

export type Query = Record<string, string | undefined>;

const MAX_LIMIT = 500;
const DEFAULT_LIMIT = 50;
/** The longest `q`, `eventType` or `mapping` (an event type is at most 100 characters; an id rarely more). */
const MAX_TEXT_CHARS = 200;
/** What `GET /api/runs?status=` takes: a run's status, or `failed` (error, timeout or a failed delivery). */
const RUN_FILTERS: readonly NonNullable<RunListFilter['status']>[] = [...RUN_STATUSES, 'failed'];
const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** `limit`: 50 unless given, 1 to 500. */
export function limitOf(query: Query): number {
  if (query.limit === undefined) return DEFAULT_LIMIT;
  // Digits only: Number() would also read `0x10`, `1e2` and ` 5`.
  const limit = /^[1-9][0-9]{0,2}$/.test(query.limit) ? Number(query.limit) : Number.NaN;
  if (!(limit <= MAX_LIMIT))
    throw hookdError('INVALID_FIELD', { field: 'limit', expected: `a whole number from 1 to ${MAX_LIMIT}` });
  return limit;
}

/** `cursor`: the `nextCursor` of the page before. */
export function cursorOf(query: Query): { beforeSeq?: number } {
  if (query.cursor === undefined) return {};
  if (!/^[1-9][0-9]{0,15}$/.test(query.cursor))
    throw hookdError('INVALID_FIELD', { field: 'cursor', expected: 'the nextCursor of a previous page' });
  return { beforeSeq: Number(query.cursor) };
}

/** `since` (or `until`, as `field`): an ISO time, or a duration back from now (`30m`, `1h`, `7d`). */
export function sinceOf(value: string, now = Date.now(), field = 'since'): number {
  const ago = /^([1-9][0-9]{0,6})(s|m|h|d)$/.exec(value);
  if (ago) return now - Number(ago[1]) * UNIT_MS[ago[2] as keyof typeof UNIT_MS];
  const at = /^\d{4}-\d{2}-\d{2}/.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(at))
    throw hookdError('INVALID_FIELD', { field, expected: 'an ISO time or a duration such as 30m, 1h, 7d' });
  return at;
}

/** `true` or `false`, else 400 `INVALID_FIELD`. */
export function booleanOf(field: string, value: string): boolean {
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw hookdError('INVALID_FIELD', { field, expected: 'true or false' });
}

/** Every parameter given once: `?q=a&q=b` is a 400, not a list nobody reads. */
function singleValues(query: Query): void {
  for (const [field, value] of Object.entries(query))
    if (typeof value !== 'string' && value !== undefined)
      throw hookdError('INVALID_FIELD', { field, expected: 'one value' });
}

/** A text parameter: white space trimmed, absent when empty, at most 200 characters. */
function textOf(field: string, given: string | undefined): string | undefined {
  const value = given?.trim();
  if (value === undefined || value === '') return undefined;
  if (value.length > MAX_TEXT_CHARS)
    throw hookdError('INVALID_FIELD', { field, expected: `at most ${MAX_TEXT_CHARS} characters` });
  return value;
}

/** `GET /api/requests`'s filters. */
export function requestFilter(query: Query, now = Date.now()): RequestLogFilter {
  singleValues(query);
  const filter: { -readonly [K in keyof RequestLogFilter]: RequestLogFilter[K] } = {
    limit: limitOf(query),
    ...cursorOf(query),
  };
  if (query.path) filter.path = query.path;
  if (query.status !== undefined) {
    const match = /^([1-5])(?:xx|([0-9]{2}))$/.exec(query.status);
    if (!match)
      throw hookdError('INVALID_FIELD', { field: 'status', expected: 'a status such as 500, or a class such as 5xx' });
    filter.status = match[2] === undefined ? { class: Number(match[1]) } : { exact: Number(query.status) };
  }
  if (query.failed !== undefined) filter.failed = booleanOf('failed', query.failed);
  if (query.since !== undefined) filter.since = sinceOf(query.since, now);
  if (query.until !== undefined) filter.until = sinceOf(query.until, now, 'until');
  if (query.replayed !== undefined) filter.replayed = booleanOf('replayed', query.replayed);
  if (query.replays !== undefined) filter.replays = booleanOf('replays', query.replays);
  if (query.refused !== undefined) filter.refused = booleanOf('refused', query.refused);
  const eventType = textOf('eventType', query.eventType);
  if (eventType !== undefined) filter.eventType = eventType;
  const mapping = textOf('mapping', query.mapping);
  if (mapping !== undefined) filter.mapping = mapping;
  const search = textOf('q', query.q);
  if (search !== undefined) filter.search = search;
  return filter;
}

/** `GET /api/runs`'s filters. */
export function runFilter(query: Query): RunListFilter {
  singleValues(query);
  const status = query.status as RunListFilter['status'];
  if (status !== undefined && !RUN_FILTERS.includes(status))
    throw hookdError('INVALID_FIELD', { field: 'status', expected: RUN_FILTERS.join(', ') });
  const mapping = textOf('mapping', query.mapping);
  return {
    limit: limitOf(query),
    ...cursorOf(query),
    ...(status ? { status } : {}),
    ...(mapping === undefined ? {} : { mapping }),
  };
}
