import { MAIN_SESSION } from '../../action-shape.js';
import { type BackoffBounds, backoffMs } from '../../backoff.js';
import type { Clock } from '../../clock.js';
import { hookdError } from '../../errors.js';
import type { Logger } from '../../log.js';
import {
  type DeliveryOutcome,
  LINGER,
  type RunRecord,
  type SessionMessage,
  type StoreContract,
  type WriteOptions,
  type Writes,
} from '../../store/index.js';

export const SUMMARY_MAX_CHARS = 2000;
/** Between tries of a run's write the store refused (a full disk): 250 ms doubling to 30 s. */
export const WRITE_RETRY: BackoffBounds = { minMs: 250, maxMs: 30_000 };

/**
 * `Hook <name>: <reply>` / `Hook <name> (error): <reason>` / `Hook <name> (cancelled)`
 * (docs/runtime.md#agent-runs).
 */
export function summaryText(run: RunRecord): string {
  const label = run.name ? `Hook ${run.name}` : 'Hook';
  if (run.status === 'ok') return `${label}: ${trimTo(run.output ?? '', SUMMARY_MAX_CHARS)}`;
  if (run.status === 'cancelled') return `${label} (cancelled)`;
  return `${label} (error): ${trimTo(run.error ?? run.status, SUMMARY_MAX_CHARS)}`;
}

function trimTo(text: string, max: number): string {
  const trimmed = text.trim();
  return trimmed.length > max ? `${trimmed.slice(0, max - 1)}…` : trimmed;
}

/** A finished model turn: the run with its result, and the messages it adds to its session. */
export type Turn = { readonly run: RunRecord; readonly messages: readonly SessionMessage[] };

/** The writes that carry a run to its end, each tried again while the store refuses it. */
export interface RunCommits {
  /**
   * Commits `write`, trying again with back-off while the store refuses it (a full disk, a
   * locked file): the run keeps its model reply and its delivery instead of being stuck
   * `running` until a restart. A failed commit rolled back, so trying again is safe. Only
   * `shutdown` ends the tries; the run then resumes at the next start. A run's progress and
   * results linger for company in the group commit (LINGER); an operator's cancel does not.
   */
  commit(runId: string, write: (w: Writes) => void, shutdown: AbortSignal, options?: WriteOptions): Promise<void>;
  /** Writes a finished turn: the transcript (for a reply) and the run's final status. */
  recordTurn(w: Writes, turn: Turn): void;
  /** The turn (unless written before), the delivery outcome and the summary, in one commit. */
  summarize(run: RunRecord, turn: Turn | undefined, outcome: DeliveryOutcome, shutdown: AbortSignal): Promise<void>;
  /**
   * Ends `run` as cancelled (docs/runtime.md#cancel): its status, its delivery skipped and its
   * summary `Hook <name> (cancelled)`, in one commit; a run summarized meanwhile is left as it is.
   */
  cancelled(run: RunRecord, shutdown: AbortSignal): Promise<void>;
}

/** Creates the run writes over `store`. */
export function createRunCommits(options: { store: StoreContract; log: Logger; clock: Clock }): RunCommits {
  const { store, log, clock } = options;
  const now = clock.now;

  async function commit(
    runId: string,
    write: (w: Writes) => void,
    shutdown: AbortSignal,
    options?: WriteOptions,
  ): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await store.group.write(write, options);
        if (attempt > 0) log.info({ runId, attempts: attempt + 1 }, 'run write committed after retries');
        return;
      } catch (err) {
        if (shutdown.aborted) throw err;
        const retryInMs = backoffMs(attempt, WRITE_RETRY);
        log.error({ err, runId, attempt: attempt + 1, retryInMs }, 'run write failed; retrying');
        await clock.sleep(retryInMs, shutdown);
      }
    }
  }

  function recordTurn(w: Writes, { run, messages }: Turn): void {
    const at = run.finishedAt ?? now();
    w.messages.append(run.sessionKey, messages, run.id, at);
    w.runs.finish(
      run.id,
      {
        status: run.status as 'ok' | 'error' | 'timeout',
        ...(run.output === undefined ? {} : { output: run.output }),
        ...(run.error === undefined ? {} : { error: run.error }),
      },
      at,
    );
  }

  /** The run's summary event: its id is the run's, so that it is posted once whoever posts it. */
  function postSummary(w: Writes, run: RunRecord): void {
    w.events.insert({
      id: `${run.id}:summary`,
      sessionKey: MAIN_SESSION,
      text: summaryText(run),
      origin: 'run-summary',
      allowUnsafeExternalContent: run.allowUnsafeExternalContent,
      contentSource: run.contentSource,
      createdAt: now(),
    });
    w.runs.markSummarized(run.id, now());
  }

  return {
    commit,
    recordTurn,
    summarize: (run, turn, outcome, shutdown) =>
      commit(
        run.id,
        (w) => {
          if (turn) recordTurn(w, turn);
          if (!run.delivery) w.runs.recordDelivery(run.id, outcome);
          postSummary(w, run);
        },
        shutdown,
        LINGER,
      ),
    cancelled(run, shutdown) {
      const error = hookdError('RUN_CANCELLED').message;
      const ended: RunRecord = { ...run, status: 'cancelled', error };
      return commit(
        run.id,
        (w) => {
          w.runs.cancel(run.id, error, now());
          postSummary(w, ended);
        },
        shutdown,
      );
    },
  };
}
