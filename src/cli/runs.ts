import { localTime } from '../time-format.js';
import type { DeliveryOutcome, RunAttemptView, RunListItem } from '../views.js';
import { answerFailed, type GatewayOptions, gatewayClient, query } from './gateway-client.js';
import type { CliIo } from './io.js';
import { excerpt, table } from './table.js';
import { oneLine } from './terminal-text.js';

export interface RunsOptions extends GatewayOptions {
  status?: string;
  mapping?: string;
  limit: string;
}

/** The longest `retrying (…)` or `waiting` note a row of `hookd runs` shows. */
const RETRYING_CHARS = 80;
/** The longest output or error `hookd runs <id>` shows (the whole one: `--json`, the console). */
const TEXT_CHARS = 2000;

/**
 * A run's status; while it waits, why (docs/runtime.md#waiting), else while it retries its model
 * call or delivery, the last failed try; `cancelling` while its node has not ended it yet.
 */
function statusOf(run: RunListItem): string {
  const note = run.waiting ?? run.retrying;
  const status = run.cancelling ? `${run.status} (cancelling)` : run.status;
  return note ? `${status}: ${excerpt(note, RETRYING_CHARS)}` : status;
}

/** `sent (ops → 42)`, `skipped (deliver is false)`, `failed (…)`. */
function deliveryText(delivery: DeliveryOutcome): string {
  const where = delivery.channel ? `${delivery.channel}${delivery.to ? ` → ${delivery.to}` : ''}` : '';
  const detail = [where, delivery.reason].filter(Boolean).join('; ');
  return `${delivery.status}${detail ? ` (${detail})` : ''}`;
}

/** `hookd runs`: agent runs of a running gateway, newest first. */
export async function runsCommand(options: RunsOptions, io: CliIo): Promise<number> {
  const gateway = gatewayClient(options, io);
  // A filtered page looks at a stretch of runs at a time (docs/runtime.md#admin-api): pages
  // follow one another until `limit` runs or the oldest.
  const runs: RunListItem[] = [];
  let cursor: string | undefined;
  do {
    const want = Number(options.limit) - runs.length;
    const params = { status: options.status, mapping: options.mapping, limit: want, cursor };
    const answer = await gateway.call('GET', `/api/runs${query(params)}`);
    if (answer.status !== 200) return answerFailed(io, answer);
    runs.push(...(answer.body.runs as RunListItem[]));
    cursor = (answer.body.nextCursor as string | null) ?? undefined;
  } while (cursor !== undefined && runs.length < Number(options.limit));
  if (options.json) {
    io.out(JSON.stringify({ runs, nextCursor: cursor ?? null }, null, 2));
    return 0;
  }
  const rows = runs.map((r) => [
    localTime(r.createdAt),
    r.runId,
    statusOf(r),
    r.name ?? '-',
    r.model,
    r.delivery ? deliveryText(r.delivery) : '-',
  ]);
  if (rows.length === 0) io.out('no runs (matching these filters)');
  else for (const line of table(['CREATED', 'RUN', 'STATUS', 'NAME', 'MODEL', 'DELIVERY'], rows)) io.out(line);
  return 0;
}

/** A failed try as a line of the timeline: `model try 1 failed: MODEL_REFUSED (HTTP 500) …`. */
function attemptText(a: RunAttemptView): string {
  const status = a.status === undefined ? '' : ` (HTTP ${a.status})`;
  return `${a.kind} try ${a.n} failed: ${a.outcome}${status}${a.error ? ` ${excerpt(a.error, 160)}` : ''}`;
}

/** What happened to a run, oldest first: queued, started, each failed try, finished. */
function timelineOf(run: RunListItem): [string, string][] {
  const steps: [number, string][] = [[Date.parse(run.createdAt), 'queued']];
  if (run.startedAt) steps.push([Date.parse(run.startedAt), 'started']);
  for (const a of run.attempts) steps.push([Date.parse(a.at), attemptText(a)]);
  if (run.finishedAt) steps.push([Date.parse(run.finishedAt), `finished: ${run.status}`]);
  // A stable sort: a try logged in the same millisecond as its run's start stays after it.
  return steps.sort((a, b) => a[0] - b[0]).map(([at, what]) => [localTime(at), what]);
}

/** A reply or an error under its label, indented, cut at TEXT_CHARS. */
const indented = (text: string) =>
  `  ${(text.length > TEXT_CHARS ? `${text.slice(0, TEXT_CHARS - 1)}…` : text).replace(/\n/g, '\n  ')}`;

/** `hookd runs <id>`: one run, its timeline (queued, started, every failed try, finished) and its delivery. */
export async function runCommand(runId: string, options: GatewayOptions, io: CliIo): Promise<number> {
  const gateway = gatewayClient(options, io);
  const answer = await gateway.call('GET', `/api/runs/${encodeURIComponent(runId)}`);
  if (answer.status !== 200) return answerFailed(io, answer);
  if (options.json) {
    io.out(JSON.stringify(answer.body, null, 2));
    return 0;
  }
  const run = answer.body as unknown as RunListItem;
  const facts: [string, string | undefined][] = [
    ['run', run.runId],
    ['status', statusOf(run)],
    ['name', run.name ?? undefined],
    ['mapping', run.mappingId],
    ['model', run.model],
    ['session', run.sessionKey],
  ];
  // A fact is one line: a templated name or session key from a payload starts no fact of its own.
  for (const [label, value] of facts) if (value !== undefined) io.out(`${label.padEnd(9)}${oneLine(value)}`);
  io.out('timeline');
  for (const [at, what] of timelineOf(run)) io.out(`  ${at}  ${oneLine(what)}`);
  const pending = run.status === 'queued' || run.status === 'running' ? 'not yet (the run is not done)' : 'none yet';
  io.out(`${'delivery'.padEnd(9)}${run.delivery ? oneLine(deliveryText(run.delivery)) : pending}`);
  if (run.output) io.out(`output\n${indented(run.output)}`);
  if (run.error) io.out(`error\n${indented(run.error)}`);
  return 0;
}
