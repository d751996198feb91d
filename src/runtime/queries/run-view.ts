import type { RunAttempt, RunRecord } from '../../store/index.js';
import type { RunAttemptView, RunListItem, RunView } from '../../views.js';
import { lastText } from '../attempts/index.js';

/**
 * A run as the admin API shows it (docs/runtime.md#admin-api): its attempts, whether it is being
 * retried, why it waits (docs/runtime.md#waiting) and whether a cancel is under way.
 */

const iso = (ms: number) => new Date(ms).toISOString();

/** Why an unfinished run waits, as this node knows it (its own runs, its breakers). */
export type WaitingOf = (run: RunRecord) => string | undefined;

/** A failed try as the admin API shows it. */
function attemptView(a: RunAttempt): RunAttemptView {
  return {
    at: iso(a.at),
    kind: a.kind,
    n: a.n,
    outcome: a.outcome,
    ...(a.status === undefined ? {} : { status: a.status }),
    ...(a.error === undefined ? {} : { error: a.error }),
  };
}

/**
 * `retrying (attempt N, last: …)` while the run's model call is being retried, `retrying
 * delivery (…)` while its delivery is: its last failed try is of this execution and of the
 * step the run stands at (docs/runtime.md#attempts).
 */
function retryingOf(run: RunRecord, attempts: readonly RunAttempt[]): string | undefined {
  const last = attempts.at(-1);
  if (!last || last.at < (run.startedAt ?? 0)) return undefined;
  const what = (label: string) => `${label} (attempt ${last.n + 1}, last: ${lastText(last)})`;
  if (run.status === 'running' && last.kind === 'model') return what('retrying');
  if (run.status === 'ok' && run.delivery === undefined && last.kind === 'delivery') return what('retrying delivery');
  return undefined;
}

/**
 * Why an unfinished run is not trying (docs/runtime.md#waiting): what this node knows, else the
 * wait stored on it while that wait lasts.
 */
export function waitOf(run: RunRecord, now: number, waitingOf: WaitingOf): string | undefined {
  if (run.summarizedAt !== undefined) return undefined;
  const known = waitingOf(run);
  if (known !== undefined) return known;
  return run.waiting !== undefined && (run.notBefore === undefined || run.notBefore > now) ? run.waiting : undefined;
}

export function runViewOf(run: RunRecord, attempts: readonly RunAttempt[], waiting: string | undefined): RunView {
  const retrying = retryingOf(run, attempts);
  const cancelling = run.cancelRequestedAt !== undefined && run.summarizedAt === undefined;
  return {
    runId: run.id,
    sessionKey: run.sessionKey,
    name: run.name ?? null,
    status: run.status,
    model: run.model,
    ...(run.output === undefined ? {} : { output: run.output }),
    ...(run.error === undefined ? {} : { error: run.error }),
    ...(run.delivery === undefined ? {} : { delivery: run.delivery }),
    attempts: attempts.map(attemptView),
    ...(retrying === undefined ? {} : { retrying }),
    ...(waiting === undefined ? {} : { waiting }),
    ...(cancelling ? { cancelling } : {}),
  };
}

/** What a run list item adds to the run view: its mapping and times. */
export function runTimesOf(run: RunRecord): Omit<RunListItem, keyof RunView> {
  return {
    ...(run.mappingId === undefined ? {} : { mappingId: run.mappingId }),
    createdAt: iso(run.createdAt),
    ...(run.startedAt === undefined ? {} : { startedAt: iso(run.startedAt) }),
    ...(run.finishedAt === undefined ? {} : { finishedAt: iso(run.finishedAt) }),
  };
}
