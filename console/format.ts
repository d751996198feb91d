import { localTime } from '../src/time-format.js';
import type { RequestView, RunOutcome } from './api';

/** `2025-05-01 14:03:22`: the local date and time, as the CLI prints it too. */
export const dateTime = (iso: string): string => localTime(iso);

/** A duration in the unit that reads best: `840 ms`, `12.4 s`, `3 min 5 s`. */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)} min ${s % 60} s`;
}

/** The colour class of an HTTP status. */
export function statusClass(status: number): string {
  if (status >= 500) return 'bad';
  if (status >= 400) return 'warn';
  return 'good';
}

/** What a request's runs came to, as a row shows it: `ok · sent`, `running`, `error`, `mixed`. */
export function outcomeText(r: Pick<RequestView, 'outcome' | 'runIds'>): string {
  // A request the live stream just brought: its runs were accepted a moment ago.
  const outcome: RunOutcome | undefined = r.outcome ?? (r.runIds.length > 0 ? { status: 'queued' } : undefined);
  if (!outcome) return '—';
  const delivery = outcome.delivery ? ` · delivery ${outcome.delivery}` : '';
  return `${outcome.status}${delivery}`;
}

/** The colour class of an outcome: failed ones red, unfinished ones amber. */
export function outcomeClass(r: Pick<RequestView, 'outcome' | 'runIds'>): string {
  const o = r.outcome;
  if (!o) return r.runIds.length > 0 ? 'warn' : '';
  if (o.status === 'error' || o.status === 'timeout' || o.delivery === 'failed') return 'bad';
  if (o.status === 'ok') return o.delivery === 'mixed' ? 'warn' : 'good';
  return 'warn';
}

/**
 * Why a logged request cannot be replayed, or undefined when it can: only a request that was
 * let in and whose body was kept whole (docs/runtime.md#request-log-and-replay). `failureKept`:
 * a failed request's whole copy was kept beside its record (the request's page knows).
 */
export function replayBlocker(r: RequestView, failureKept = false): string | undefined {
  if (!r.authenticated) return 'refused at the door: nothing was let in to replay';
  if (r.bodyWhole || failureKept) return undefined;
  if (r.truncated) return 'its body was cut for the log (hooks.log.maxBodyBytes)';
  if (r.redacted) return 'its body was redacted for the log (hooks.log.redact)';
  return 'its body was not kept';
}
