import { setTimeout as sleep } from 'node:timers/promises';
import type { Dispatcher } from 'undici';
import { backoffMs } from '../backoff.js';
import { undiciRequest as request } from '../undici.js';
import type { RequestView } from '../views.js';
import { type AdminAnswer, type AdminClient, answerFailed, query } from './gateway-client.js';
import type { CliIo } from './io.js';
import { type RequestFilters, requestMatcher, requestQuery } from './request-filters.js';

/**
 * `hookd requests --follow` (docs/cli.md#hookd-requests): the last requests, then every new one
 * as the gateway's live stream (`GET /api/stream`) announces it. A lost stream is opened again
 * with a growing wait, and what was logged meanwhile is read from the log before going on, so
 * that a gateway's restart loses no row.
 */

/** How `--follow` runs: the filters, how many requests it shows first, and how it prints one. */
export interface FollowPlan {
  readonly filters: RequestFilters;
  readonly limit: number;
  print(r: RequestView): void;
}

const BACKOFF = { minMs: 500, maxMs: 10_000 };
/** The stream pings every 15 s: silence three times that long is a connection gone. */
const SILENT_MS = 45_000;
/** The most a catch-up after a reconnect reads (the API's page bound). */
const CATCH_UP_LIMIT = 500;
/** A catch-up reaches this far before the last request seen: one received earlier may be logged later. */
const CATCH_UP_MARGIN_MS = 60_000;
/** Ids remembered to print each request once across catch-ups. */
const SEEN_IDS = 5000;

/** Follows until SIGINT or SIGTERM (exit 0), or until the gateway refuses the stream or the filters (exit 1). */
export async function followRequests(gateway: AdminClient, plan: FollowPlan, io: CliIo): Promise<number> {
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    return await follow(gateway, plan, io, stop.signal);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

/** The requests printed so far: each once, and where a catch-up starts. */
function createSeen() {
  const ids = new Set<string>();
  let newestMs: number | undefined;
  return {
    /** False when `r` was seen already; else remembers it. */
    add(r: RequestView): boolean {
      if (ids.has(r.id)) return false;
      ids.add(r.id);
      if (ids.size > SEEN_IDS) ids.delete(ids.values().next().value as string);
      newestMs = Math.max(newestMs ?? 0, Date.parse(r.receivedAt));
      return true;
    },
    /** Where a catch-up starts: before the newest request seen, else before `fallbackMs`. */
    fromMs: (fallbackMs: number) => (newestMs ?? fallbackMs) - CATCH_UP_MARGIN_MS,
  };
}

async function follow(gateway: AdminClient, plan: FollowPlan, io: CliIo, signal: AbortSignal): Promise<number> {
  const seen = createSeen();
  const keep = requestMatcher(plan.filters);
  let attempt = 0;
  let lostAtMs: number | undefined;
  while (!signal.aborted) {
    const opened = await openStream(gateway, signal);
    if (signal.aborted) break;
    if ('status' in opened && opened.status < 500) return answerFailed(io, opened);
    if ('why' in opened || 'status' in opened) {
      const waitMs = backoffMs(attempt++, BACKOFF);
      const why = 'why' in opened ? opened.why : `HTTP ${opened.status}`;
      io.err(`hookd: cannot reach ${gateway.base}/api/stream (${why}); trying again in ${waitMs / 1000} s`);
      await sleep(waitMs, undefined, { signal }).catch(() => undefined);
      continue;
    }
    attempt = 0;
    const since = lostAtMs === undefined ? undefined : new Date(seen.fromMs(lostAtMs)).toISOString();
    const page = await gateway.call(
      'GET',
      `/api/requests${query({ ...requestQuery(plan.filters), ...(since ? { since, limit: CATCH_UP_LIMIT } : { limit: plan.limit }) })}`,
    );
    if (page.status !== 200) {
      opened.body.destroy();
      return answerFailed(io, page);
    }
    for (const r of (page.body.requests as RequestView[]).reverse()) if (seen.add(r)) plan.print(r);
    io.err(`hookd: following ${gateway.base}${lostAtMs === undefined ? ' (Ctrl-C to stop)' : ' again'}`);
    const why = await readRequests(opened, signal, (r) => {
      if (keep(r) && seen.add(r)) plan.print(r);
    });
    if (signal.aborted) break;
    io.err(`hookd: the stream ended (${why})`);
    lostAtMs = Date.now();
  }
  return 0;
}

/** The stream's answer: open (200), the gateway's error answer, or why it could not be reached. */
async function openStream(
  gateway: AdminClient,
  signal: AbortSignal,
): Promise<Dispatcher.ResponseData<unknown> | AdminAnswer | { why: string }> {
  try {
    const res = await request(`${gateway.base}/api/stream`, {
      headers: { authorization: `Bearer ${gateway.token}`, accept: 'text/event-stream' },
      signal,
      headersTimeout: 10_000,
      bodyTimeout: SILENT_MS,
    });
    if (res.statusCode === 200) return res;
    const text = await res.body.text();
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      body = { error: text.slice(0, 200) };
    }
    return { status: res.statusCode, headers: res.headers, body };
  } catch (err) {
    return { why: (err as NodeJS.ErrnoException).code ?? (err as Error).message };
  }
}

/** Reads Server-Sent Events until the stream ends; calls `onRequest` for each `request` event; resolves to why it ended. */
async function readRequests(
  res: Dispatcher.ResponseData<unknown>,
  signal: AbortSignal,
  onRequest: (r: RequestView) => void,
): Promise<string> {
  let buffered = '';
  try {
    for await (const chunk of res.body) {
      buffered += (chunk as Buffer).toString('utf8');
      let end = buffered.indexOf('\n\n');
      while (end !== -1) {
        const event = parseEvent(buffered.slice(0, end));
        buffered = buffered.slice(end + 2);
        if (event?.name === 'request') onRequest(JSON.parse(event.data) as RequestView);
        end = buffered.indexOf('\n\n');
      }
    }
    return 'closed by the gateway';
  } catch (err) {
    if (signal.aborted) return 'stopped';
    return (err as NodeJS.ErrnoException).code ?? (err as Error).message;
  }
}

/** One event of a Server-Sent Events stream (`event:` and `data:` lines); undefined for a comment. */
function parseEvent(block: string): { name: string; data: string } | undefined {
  let name = 'message';
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith('event:')) name = line.slice(6).trim();
    else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
  }
  return data.length === 0 ? undefined : { name, data: data.join('\n') };
}
