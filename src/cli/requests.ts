import type { RequestView, RunListItem } from '../views.js';
import { resolveConfig } from './config-source.js';
import { type AdminAnswer, type AdminClient, adminClient } from './gateway-client.js';
import type { CliIo } from './io.js';

/** What the request log commands share: where the gateway is, and how to print. */
export interface GatewayOptions {
  config?: string;
  url?: string;
  json?: boolean;
}

export interface RequestsOptions extends GatewayOptions {
  failed?: boolean;
  path?: string;
  status?: string;
  since?: string;
  limit: string;
}

export interface ReplayOptions extends GatewayOptions {
  failed?: boolean;
  since?: string;
  limit: string;
  force?: boolean;
}

export interface RunsOptions extends GatewayOptions {
  status?: string;
  limit: string;
}

function client(options: GatewayOptions, io: CliIo): AdminClient {
  // Only the keys the client reads must resolve (docs/runtime.md#request-log-and-replay).
  return adminClient(resolveConfig(options.config, io, { createSecrets: false, lenientEnv: true }), io, options.url);
}

function query(params: Record<string, string | number | boolean | undefined>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value !== undefined) search.set(key, String(value));
  const text = search.toString();
  return text ? `?${text}` : '';
}

/** Prints an admin API error and returns the exit code. */
function failed(io: CliIo, answer: AdminAnswer): number {
  io.err(
    `hookd: the gateway answered ${answer.status}: ${String(answer.body.error ?? '')} (${String(answer.body.code ?? '')})`,
  );
  return 1;
}

/** Columns padded to their widest cell; the last one is not padded. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)];
}

const when = (iso: string) => iso.replace('T', ' ').slice(0, 19);

function actionsOf(r: RequestView): string {
  const parts: string[] = [];
  if (r.eventIds.length > 0) parts.push(`${r.eventIds.length} event${r.eventIds.length === 1 ? '' : 's'}`);
  if (r.runIds.length > 0) parts.push(r.runIds.length === 1 ? `run ${r.runIds[0]}` : `${r.runIds.length} runs`);
  if (r.replayOf) parts.push(`${r.forced ? 'forced ' : ''}replay of ${r.replayOf}`);
  if (r.replayedAt) parts.push('replayed');
  return parts.join(', ') || '-';
}

/** `hookd requests`: the request log of a running gateway, newest first. */
export async function requestsCommand(options: RequestsOptions, io: CliIo): Promise<number> {
  const gateway = client(options, io);
  const answer = await gateway.call(
    'GET',
    `/api/requests${query({ failed: options.failed || undefined, path: options.path, status: options.status, since: options.since, limit: options.limit })}`,
  );
  if (answer.status !== 200) return failed(io, answer);
  if (options.json) {
    io.out(JSON.stringify(answer.body, null, 2));
    return 0;
  }
  const rows = (answer.body.requests as RequestView[]).map((r) => [
    when(r.receivedAt),
    r.id,
    r.path,
    String(r.status),
    r.code ?? '-',
    r.mappingId ?? '-',
    String(r.durationMs),
    actionsOf(r),
  ]);
  if (rows.length === 0) io.out('no requests logged (matching these filters)');
  else
    for (const line of table(['RECEIVED', 'ID', 'PATH', 'STATUS', 'CODE', 'MAPPING', 'MS', 'ACTIONS'], rows))
      io.out(line);
  if (answer.body.nextCursor)
    io.out(
      `(more: --limit ${Number(options.limit) * 2}, or GET /api/requests?cursor=${String(answer.body.nextCursor)})`,
    );
  return 0;
}

/**
 * The ids `--failed` replays: requests that failed on our side (5xx), neither replays nor
 * replayed, oldest first; or the gateway's answer when it refused to list them.
 */
async function failedIds(
  gateway: AdminClient,
  since: string | undefined,
  limit: number,
): Promise<string[] | AdminAnswer> {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const answer = await gateway.call(
      'GET',
      `/api/requests${query({ status: '5xx', replayed: false, replays: false, since, cursor, limit: Math.min(limit, 500) })}`,
    );
    if (answer.status !== 200) return answer;
    ids.push(...(answer.body.requests as RequestView[]).map((r) => r.id));
    cursor = (answer.body.nextCursor as string | null) ?? undefined;
  } while (cursor && ids.length < limit);
  return ids.slice(0, limit).reverse();
}

/** `hookd replay ID… | --failed`: replays logged requests through the current mappings and transforms. */
export async function replayCommand(ids: readonly string[], options: ReplayOptions, io: CliIo): Promise<number> {
  if (ids.length > 0 === Boolean(options.failed)) {
    io.err('hookd: replay takes request ids, or --failed (not both)');
    return 2;
  }
  const gateway = client(options, io);
  const targets = options.failed ? await failedIds(gateway, options.since, Number(options.limit)) : ids;
  if ('status' in targets) return failed(io, targets);
  if (targets.length === 0) io.out('nothing to replay');
  const results: { id: string; status: number; replayId: string; remembered: boolean; body: unknown }[] = [];
  const force = options.force ? { force: true } : undefined;
  for (const id of targets) {
    const answer = await gateway.call('POST', `/api/requests/${encodeURIComponent(id)}/replay`, force);
    const replayId = String(answer.headers['x-request-id'] ?? '');
    const remembered = answer.headers['idempotent-replayed'] === 'true';
    results.push({ id, status: answer.status, replayId, remembered, body: answer.body });
    if (!options.json) io.out(`${id} → ${answer.status} (replay ${replayId}) ${replayOutcome(answer, remembered)}`);
  }
  if (options.json) io.out(JSON.stringify({ replays: results }, null, 2));
  return results.every((r) => r.status < 300) ? 0 : 1;
}

/** The longest `retrying (…)` or `waiting` note a row of `hookd runs` shows. */
const RETRYING_CHARS = 80;

/**
 * A run's status; while it waits, why (docs/runtime.md#waiting), else while it retries its model
 * call or delivery, the last failed try; `cancelling` while its node has not ended it yet.
 */
function statusOf(run: RunListItem): string {
  const note = run.waiting ?? run.retrying;
  const status = run.cancelling ? `${run.status} (cancelling)` : run.status;
  if (!note) return status;
  return `${status}: ${note.length > RETRYING_CHARS ? `${note.slice(0, RETRYING_CHARS - 1)}…` : note}`;
}

/** What a replay's answer says, on one line. */
function replayOutcome(answer: AdminAnswer, remembered: boolean): string {
  if (answer.status >= 300) return `${answer.body.code}: ${answer.body.error}`;
  const what = answer.status === 204 ? 'no action' : JSON.stringify(answer.body);
  // Nothing ran: the sender's retry, or an earlier replay, had already run it (--force runs anew).
  return remembered ? `${what} (already run: the answer of its first run; --force runs it anew)` : what;
}

/** `hookd runs`: agent runs of a running gateway, newest first. */
export async function runsCommand(options: RunsOptions, io: CliIo): Promise<number> {
  const gateway = client(options, io);
  const answer = await gateway.call('GET', `/api/runs${query({ status: options.status, limit: options.limit })}`);
  if (answer.status !== 200) return failed(io, answer);
  if (options.json) {
    io.out(JSON.stringify(answer.body, null, 2));
    return 0;
  }
  const rows = (answer.body.runs as RunListItem[]).map((r) => [
    when(r.createdAt),
    r.runId,
    statusOf(r),
    r.name ?? '-',
    r.model,
    r.delivery ? `${r.delivery.status}${r.delivery.reason ? ` (${r.delivery.reason})` : ''}` : '-',
  ]);
  if (rows.length === 0) io.out('no runs (matching these filters)');
  else for (const line of table(['CREATED', 'RUN', 'STATUS', 'NAME', 'MODEL', 'DELIVERY'], rows)) io.out(line);
  return 0;
}
