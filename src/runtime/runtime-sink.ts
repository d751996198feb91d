import type { Accepted, Action, ActionSink } from '../actions/index.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config/index.js';
import { hookdError } from '../errors.js';
import type { Logger } from '../log.js';
import { type FailureLog, failureLog, type SinkOptions, type StoreBackend } from '../store/index.js';
import type { Heartbeat } from './heartbeat/index.js';
import { type ActivityFeed, requestViewOf } from './queries/index.js';
import type { IngressPressure, RunQueue } from './runs/index.js';

/** What a 503 for a full run queue asks the sender to wait. */
const QUEUE_RETRY_AFTER_S = 30;
/** A failed request log write is logged once per this interval, its repeats counted. */
const RECORD_ERROR_EVERY_MS = 10_000;

/**
 * The log of request log records not written: a store out of reach fails every request's, so
 * its failures are one line per 10 s (the cause, no stack; repeats counted as `suppressed`), and
 * any other failure one line per 10 s with its error.
 */
export const recordErrorLog = (log: Logger, clock?: Pick<Clock, 'setTimeout'>): FailureLog =>
  failureLog(log, 'a request log record was not written', RECORD_ERROR_EVERY_MS, clock);

/** What the runtime's action sink hands accepted work to, and tells of what it records. */
export interface RuntimeSinkParts {
  readonly config: Config;
  readonly backend: StoreBackend;
  readonly retention: NonNullable<SinkOptions['retention']>;
  readonly activity: ActivityFeed;
  readonly runs: RunQueue;
  readonly heartbeat: Pick<Heartbeat, 'request'>;
  readonly pressure: Pick<IngressPressure, 'accepted'>;
  readonly log: Logger;
  /** Where a record not written is reported (recordErrorLog). */
  readonly recordErrors: FailureLog;
}

/** Refuses a request whose agent runs would queue more than `maxQueuedRuns` (QUEUE_FULL, before anything is written). */
export function admitRuns(runs: Pick<RunQueue, 'depth'>, maxQueuedRuns: number, actions: readonly Action[]): void {
  const newRuns = actions.filter((a) => a.kind === 'agent').length;
  if (newRuns > 0 && runs.depth + newRuns > maxQueuedRuns) {
    throw hookdError('QUEUE_FULL', undefined, { headers: { 'retry-after': String(QUEUE_RETRY_AFTER_S) } });
  }
}

/** Schedules what a commit accepted: each agent run into the queue, each `now` wake as a heartbeat request. */
export function scheduleCommitted(
  runs: Pick<RunQueue, 'enqueue'>,
  heartbeat: Pick<Heartbeat, 'request'>,
  actions: readonly Action[],
  accepted: readonly Accepted[],
): void {
  accepted.forEach((a, i) => {
    const action = actions[i];
    if (a.kind === 'agent') {
      if (action?.kind === 'agent')
        runs.enqueue({
          id: a.runId,
          sessionKey: a.sessionKey,
          model: action.model,
          ...(action.mappingId === undefined ? {} : { mappingId: action.mappingId }),
        });
    } else if (action?.kind === 'wake' && a.mode === 'now') heartbeat.request();
  });
}

/** The action sink hook requests commit through: admitted against the run queue, then scheduled. */
export function createRuntimeSink(parts: RuntimeSinkParts): ActionSink {
  const { config, activity, runs, heartbeat, pressure, log } = parts;
  const { maxQueuedRuns } = config.agents.defaults;
  return parts.backend.createSink({
    retention: parts.retention,
    idempotencyTtlSeconds: config.hooks.idempotency.ttlSeconds,
    onError: (err) => log.error({ err }, 'scheduling committed actions failed; they run at the next start'),
    onRecordError: parts.recordErrors.report,
    onDoubtsResolved: ({ committed, notCommitted, untold }) => {
      // What the sender was told may have been accepted: an operator reconciles by these ids.
      if (committed.length > 0)
        log.warn({ requests: committed }, 'answered 503 COMMIT_UNCONFIRMED, yet committed: their actions run');
      if (notCommitted.length > 0)
        log.info(
          { requests: notCommitted },
          'answered 503 COMMIT_UNCONFIRMED, and not committed: nothing of them runs',
        );
      if (untold > 0) log.warn({ untold }, 'more commits were answered 503 COMMIT_UNCONFIRMED than are looked for');
    },
    onRecorded: (record) => activity.publish(() => ({ kind: 'request', request: requestViewOf(record) })),
    admit: (actions) => admitRuns(runs, maxQueuedRuns, actions),
    onCommitted(actions, accepted) {
      pressure.accepted();
      scheduleCommitted(runs, heartbeat, actions, accepted);
    },
  });
}
