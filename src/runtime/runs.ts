import type { ThinkingLevel } from '../action-shape.js';
import { hookdError } from '../errors.js';
import type { Logger } from '../log.js';
import type { DeliveryOutcome, RunRecord, SessionMessage, Store } from '../store/index.js';
import type { Delivery } from './delivery.js';
import type { Heartbeat } from './heartbeat.js';
import type { ModelRouter } from './ports.js';
import { findInjectionPhrases, wrapExternalContent } from './safety.js';
import { MAIN_SESSION } from './sink.js';
import { timeoutSignal } from './timeout.js';

export const SUMMARY_MAX_CHARS = 2000;

export interface RunQueueOptions {
  readonly store: Store;
  readonly models: ModelRouter;
  readonly delivery: Delivery;
  readonly heartbeat: Heartbeat;
  readonly maxConcurrent: number;
  /**
   * Runs allowed to execute right now, at most `maxConcurrent` (default: `maxConcurrent`);
   * the runtime lowers it while hook requests saturate the event loop. Never below 1.
   */
  readonly concurrency?: () => number;
  /** Per-mapping caps on runs executing at once (a mapping's `maxConcurrent`). */
  readonly mappingLimits?: ReadonlyMap<string, number>;
  readonly defaultTimeoutSeconds: number;
  readonly defaultThinking?: ThinkingLevel;
  readonly log: Logger;
  /** Transcript messages sent as history (the newest ones). */
  readonly historyLimit?: number;
  readonly now?: () => number;
}

/** `Hook <name>: <reply>` / `Hook <name> (error): <reason>` (DESIGN §6.2). */
export function summaryText(run: RunRecord): string {
  const label = run.name ? `Hook ${run.name}` : 'Hook';
  if (run.status === 'ok') return `${label}: ${trimTo(run.output ?? '', SUMMARY_MAX_CHARS)}`;
  return `${label} (error): ${trimTo(run.error ?? run.status, SUMMARY_MAX_CHARS)}`;
}

function trimTo(text: string, max: number): string {
  const trimmed = text.trim();
  return trimmed.length > max ? `${trimmed.slice(0, max - 1)}…` : trimmed;
}

/**
 * Agent runs: executed in arrival order with at most `maxConcurrent` at once, runs of
 * one session key strictly one after another. Each run ends with its delivery outcome
 * recorded, then its summary on the main session, then (wakeMode now) a heartbeat.
 */
export function createRunQueue(options: RunQueueOptions) {
  const { store, models, delivery, heartbeat } = options;
  const log = options.log.child({ component: 'runs' });
  const now = options.now ?? Date.now;
  const historyLimit = options.historyLimit ?? 100;
  const pending: { id: string; sessionKey: string; mappingId?: string }[] = [];
  const busySessions = new Set<string>();
  const busyMappings = new Map<string, number>();
  const mappingFull = (id: string | undefined) =>
    id !== undefined && (busyMappings.get(id) ?? 0) >= (options.mappingLimits?.get(id) ?? Number.POSITIVE_INFINITY);
  const inFlight = new Set<Promise<void>>();
  const shutdown = new AbortController();
  let stopped = false;

  function pump(): void {
    const limit = Math.max(1, Math.min(options.maxConcurrent, options.concurrency?.() ?? options.maxConcurrent));
    for (let i = 0; i < pending.length && inFlight.size < limit && !stopped; ) {
      const next = pending[i] as { id: string; sessionKey: string; mappingId?: string };
      if (busySessions.has(next.sessionKey) || mappingFull(next.mappingId)) {
        i++;
        continue;
      }
      pending.splice(i, 1);
      const run = store.runs.get(next.id);
      if (!run) continue;
      busySessions.add(run.sessionKey);
      const mappingId = run.mappingId;
      if (mappingId !== undefined) busyMappings.set(mappingId, (busyMappings.get(mappingId) ?? 0) + 1);
      const task = execute(run)
        .catch((err: unknown) => log.error({ err, runId: run.id }, 'run crashed'))
        .finally(() => {
          busySessions.delete(run.sessionKey);
          if (mappingId !== undefined) busyMappings.set(mappingId, (busyMappings.get(mappingId) ?? 1) - 1);
          inFlight.delete(task);
          pump();
        });
      inFlight.add(task);
    }
  }

  async function execute(queued: RunRecord): Promise<void> {
    const fresh = queued.status === 'queued' || queued.status === 'running';
    const result = fresh ? await callModel(queued) : { run: queued };
    if (!result) return;
    const { run } = result;
    // The finished turn not yet written (none when a previous process wrote it).
    let unwritten = 'messages' in result ? result.messages : undefined;
    let outcome = run.delivery;
    if (!outcome) {
      const delivering = run.deliver && run.status === 'ok';
      if (delivering && unwritten) {
        // A delivery is network I/O: the turn is committed first, so that a crash while
        // delivering does not ask the model again.
        const messages = unwritten;
        await store.group.write(() => recordTurn(run, messages));
        unwritten = undefined;
      }
      outcome = await deliveryOf(run);
      // Cut off by shutdown: left unsummarised, so the next start delivers it again.
      if (delivering && shutdown.signal.aborted) return;
    }
    // The turn (unless written above), the delivery outcome and the summary share one commit.
    const messages = unwritten;
    const delivered = outcome;
    await store.group.write(() => {
      if (messages) recordTurn(run, messages);
      if (!run.delivery) store.runs.recordDelivery(run.id, delivered);
      store.events.insert({
        id: `${run.id}:summary`,
        sessionKey: MAIN_SESSION,
        text: summaryText(run),
        origin: 'run-summary',
        allowUnsafeExternalContent: run.allowUnsafeExternalContent,
        contentSource: run.contentSource,
        createdAt: now(),
      });
      store.runs.markSummarized(run.id, now());
    });
    log.info({ runId: run.id, status: run.status, delivery: outcome.status, why: outcome.reason }, 'run done');
    if (run.wakeMode === 'now') heartbeat.request();
  }

  /** Writes a finished turn: the transcript (for a reply) and the run's final status. */
  function recordTurn(run: RunRecord, messages: readonly SessionMessage[]): void {
    const at = run.finishedAt ?? now();
    store.messages.append(run.sessionKey, messages, run.id, at);
    store.runs.finish(
      run.id,
      {
        status: run.status as 'ok' | 'error' | 'timeout',
        ...(run.output === undefined ? {} : { output: run.output }),
        ...(run.error === undefined ? {} : { error: run.error }),
      },
      at,
    );
  }

  /**
   * Runs the model turn and returns the finished run (not yet written) with the transcript
   * messages it adds, or undefined when shut down mid-call. Marking the run `running` joins the
   * next group commit: a crash before the result is written runs it again either way.
   */
  async function callModel(run: RunRecord): Promise<{ run: RunRecord; messages: SessionMessage[] } | undefined> {
    const startedAt = now();
    store.group
      .write(() => store.runs.markRunning(run.id, startedAt))
      .catch((err: unknown) => log.error({ err, runId: run.id }, 'marking a run running failed'));
    const content = run.allowUnsafeExternalContent ? run.message : wrapExternalContent(run.message, run.contentSource);
    const phrases = findInjectionPhrases(run.message);
    if (phrases.length > 0) log.warn({ runId: run.id, phrases }, 'possible prompt injection in hook content');
    const history = store.messages.recent(run.sessionKey, historyLimit);
    const timeoutSeconds = run.timeoutSeconds ?? options.defaultTimeoutSeconds;
    const timeout = timeoutSignal(timeoutSeconds);
    const thinking = run.thinking ?? options.defaultThinking;
    try {
      const reply = await models.complete(run.model, {
        messages: [...history, { role: 'user', content }],
        ...(thinking ? { thinking } : {}),
        signal: AbortSignal.any([timeout, shutdown.signal]),
      });
      return {
        run: { ...run, status: 'ok', output: reply, startedAt, finishedAt: now() },
        messages: [
          { role: 'user', content },
          { role: 'assistant', content: reply },
        ],
      };
    } catch (err) {
      if (shutdown.signal.aborted && !timeout.aborted) return undefined;
      const status = timeout.aborted ? 'timeout' : 'error';
      const error = timeout.aborted
        ? hookdError('RUN_TIMED_OUT', { seconds: timeoutSeconds }).message
        : (err as Error).message;
      log.warn({ runId: run.id, status, error }, 'run failed');
      // A failed turn adds nothing to the transcript, but its status is still written.
      return { run: { ...run, status, error, startedAt, finishedAt: now() }, messages: [] };
    }
  }

  async function deliveryOf(run: RunRecord): Promise<DeliveryOutcome> {
    if (!run.deliver) return delivery.skipped('deliver is false');
    if (run.status !== 'ok') return delivery.skipped(`the run ended with ${run.status}`);
    return delivery.deliver(
      { channel: run.channel, ...(run.to === undefined ? {} : { to: run.to }) },
      run.output ?? '',
      shutdown.signal,
    );
  }

  return {
    /** Schedules a committed run. */
    enqueue(runId: string, sessionKey: string, mappingId?: string): void {
      if (stopped) return;
      pending.push({ id: runId, sessionKey, ...(mappingId === undefined ? {} : { mappingId }) });
      pump();
    },
    /** Starts queued runs up to the current concurrency (after it was raised). */
    kick(): void {
      pump();
    },
    /** Picks up every run a previous process left unfinished, oldest first. */
    resume(): number {
      const unfinished = store.runs.unfinished();
      for (const run of unfinished) {
        pending.push({
          id: run.id,
          sessionKey: run.sessionKey,
          ...(run.mappingId === undefined ? {} : { mappingId: run.mappingId }),
        });
      }
      pump();
      return unfinished.length;
    },
    get depth(): number {
      return pending.length + inFlight.size;
    },
    /** Stops taking runs; aborts model calls in flight (they stay `running` and resume at the next start). */
    async stop(): Promise<void> {
      stopped = true;
      shutdown.abort(hookdError('SHUTTING_DOWN'));
      await Promise.allSettled([...inFlight]);
    },
  };
}

export type RunQueue = ReturnType<typeof createRunQueue>;
