import { localTime } from '../time-format.js';
import type { RequestView } from '../views.js';
import { followRequests } from './follow.js';
import { answerFailed, type GatewayOptions, gatewayClient, query } from './gateway-client.js';
import type { CliIo } from './io.js';
import { checkStatus, type RequestFilters, requestQuery } from './request-filters.js';
import { excerpt, row, table } from './table.js';

export interface RequestsOptions extends GatewayOptions, RequestFilters {
  limit?: string;
  follow?: boolean;
}

/** What `hookd requests` shows of a request, in this order (docs/cli.md#hookd-requests). */
const HEADER = ['RECEIVED', 'ID', 'PATH', 'EVENT', 'STATUS', 'CODE', 'MAPPING', 'MS', 'ACTIONS', 'REASON'] as const;
/** The columns' widths while following, when the rows to come are not known. */
const FOLLOW_WIDTHS = [19, 36, 10, 14, 6, 20, 14, 5, 24];
/** The longest reason a row shows (the whole one: `hookd requests --json`, the console). */
const REASON_CHARS = 120;

function actionsOf(r: RequestView): string {
  const parts: string[] = [];
  if (r.eventIds.length > 0) parts.push(`${r.eventIds.length} event${r.eventIds.length === 1 ? '' : 's'}`);
  if (r.runIds.length > 0) parts.push(r.runIds.length === 1 ? `run ${r.runIds[0]}` : `${r.runIds.length} runs`);
  if (r.replayOf) parts.push(`${r.forced ? 'forced ' : ''}replay of ${r.replayOf}`);
  if (r.replayedAt) parts.push('replayed');
  return parts.join(', ') || '-';
}

/** Why a refused or failed request was answered so (its answer's message); `-` for the others. */
function reasonOf(r: RequestView): string {
  if (r.status < 400) return '-';
  const more = r.moreRefused ? ` (and ${r.moreRefused} more refused this minute)` : '';
  return `${excerpt(r.reason ?? '-', REASON_CHARS)}${more}`;
}

/** A request as a row of cells. */
function cellsOf(r: RequestView): string[] {
  return [
    localTime(r.receivedAt),
    r.id,
    r.path,
    r.eventType ?? '-',
    String(r.status),
    r.code ?? '-',
    r.mappingId ?? '-',
    String(r.durationMs),
    actionsOf(r),
    reasonOf(r),
  ];
}

/** `hookd requests`: the request log of a running gateway, newest first; `--follow` tails it live. */
export async function requestsCommand(options: RequestsOptions, io: CliIo): Promise<number> {
  checkStatus(options.status);
  // Following, the last 10 first; all of --since (the API's page, 500 at most) when it is given.
  const limit = Number(options.limit ?? (options.follow ? (options.since ? 500 : 10) : 50));
  const gateway = gatewayClient(options, io);
  if (options.follow) {
    const lines = printer(options, io);
    return followRequests(gateway, { filters: options, limit, print: lines }, io);
  }
  const answer = await gateway.call('GET', `/api/requests${query({ ...requestQuery(options), limit })}`);
  if (answer.status !== 200) return answerFailed(io, answer);
  if (options.json) {
    io.out(JSON.stringify(answer.body, null, 2));
    return 0;
  }
  const rows = (answer.body.requests as RequestView[]).map(cellsOf);
  if (rows.length === 0) io.out('no requests logged (matching these filters)');
  else for (const line of table(HEADER, rows)) io.out(line);
  if (answer.body.nextCursor) io.out(`(more: --limit ${limit * 2}, or --since to narrow the time)`);
  return 0;
}

/** How `--follow` prints a request: one JSON object a line, or a row under a header printed once. */
function printer(options: RequestsOptions, io: CliIo): (r: RequestView) => void {
  if (options.json) return (r) => io.out(JSON.stringify(r));
  io.out(row(HEADER, FOLLOW_WIDTHS));
  return (r) => io.out(row(cellsOf(r), FOLLOW_WIDTHS));
}
