import { hookdError } from '../errors.js';
import type { RequestView } from '../views.js';

/** What `hookd requests` filters on, listing or following (docs/cli.md#hookd-requests). */
export interface RequestFilters {
  failed?: boolean;
  path?: string;
  mapping?: string;
  eventType?: string;
  status?: string;
  since?: string;
}

/** The filters as the admin API takes them (`GET /api/requests`). */
export function requestQuery(filters: RequestFilters): Record<string, string | boolean | undefined> {
  return {
    failed: filters.failed || undefined,
    path: filters.path,
    mapping: filters.mapping,
    eventType: filters.eventType,
    status: filters.status,
    since: filters.since,
  };
}

/** Throws CLI_USAGE unless `status` is a status (`500`) or a class (`5xx`). */
export function checkStatus(status: string | undefined): void {
  if (status !== undefined && !/^[1-5](?:xx|[0-9]{2})$/.test(status))
    throw hookdError('CLI_USAGE', {
      option: '--status',
      expected: 'a status such as 500, or a class such as 5xx',
      got: status,
    });
}

/** Whether a request the live stream announced passes the filters the log query applies (all but `since`). */
export function requestMatcher(filters: RequestFilters): (r: RequestView) => boolean {
  const status = filters.status;
  return (r) =>
    (filters.path === undefined || r.path === filters.path) &&
    (filters.mapping === undefined || r.mappingId === filters.mapping) &&
    (filters.eventType === undefined || r.eventType === filters.eventType) &&
    (!filters.failed || r.status >= 400) &&
    (status === undefined || (status.endsWith('xx') ? String(r.status)[0] === status[0] : String(r.status) === status));
}
