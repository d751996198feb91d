import type { RequestView } from '../views.js';
import {
  type AdminAnswer,
  type AdminClient,
  answerFailed,
  type GatewayOptions,
  gatewayClient,
  query,
} from './gateway-client.js';
import type { CliIo } from './io.js';

export interface ReplayOptions extends GatewayOptions {
  failed?: boolean;
  since?: string;
  limit: string;
  force?: boolean;
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

/** What a replay's answer says, on one line. */
function replayOutcome(answer: AdminAnswer, remembered: boolean): string {
  if (answer.status >= 300) return `${answer.body.code}: ${answer.body.error}`;
  const what = answer.status === 204 ? 'no action' : JSON.stringify(answer.body);
  // Nothing ran: the sender's retry, or an earlier replay, had already run it (--force runs anew).
  return remembered ? `${what} (already run: the answer of its first run; --force runs it anew)` : what;
}

/** One replay as `--json` prints it; `replayId` only when the replay ran and was logged. */
interface ReplayResult {
  readonly id: string;
  readonly status: number;
  readonly replayId?: string;
  readonly remembered: boolean;
  readonly body: unknown;
}

/** `hookd replay ID… | --failed`: replays logged requests through the current mappings and transforms. */
export async function replayCommand(ids: readonly string[], options: ReplayOptions, io: CliIo): Promise<number> {
  if (ids.length > 0 === Boolean(options.failed)) {
    io.err('hookd: replay takes request ids, or --failed (not both)');
    return 2;
  }
  const gateway = gatewayClient(options, io);
  const targets = options.failed ? await failedIds(gateway, options.since, Number(options.limit)) : ids;
  if ('status' in targets) return answerFailed(io, targets);
  if (targets.length === 0) io.out('nothing to replay');
  const results: ReplayResult[] = [];
  const force = options.force ? { force: true } : undefined;
  for (const id of targets) {
    const answer = await gateway.call('POST', `/api/requests/${encodeURIComponent(id)}/replay`, force);
    // A replay that ran is logged under its own id and names the request it replays; one
    // refused before running (409 REPLAY_NOT_ALLOWED, 404) has no record to name.
    const ran = answer.headers['replay-of'] !== undefined;
    const replayId = ran ? String(answer.headers['x-request-id'] ?? '') : undefined;
    const remembered = answer.headers['idempotent-replayed'] === 'true';
    results.push({ id, status: answer.status, ...(replayId ? { replayId } : {}), remembered, body: answer.body });
    if (!options.json)
      io.out(`${id} → ${answer.status}${replayId ? ` (replay ${replayId})` : ''} ${replayOutcome(answer, remembered)}`);
  }
  if (options.json) io.out(JSON.stringify({ replays: results }, null, 2));
  return results.every((r) => r.status < 300) ? 0 : 1;
}
