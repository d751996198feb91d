import type { ActionSink } from '../actions/index.js';
import { type Cancel, type Clock, systemClock } from '../clock.js';
import { type Config, parseDurationMs } from '../config/index.js';
import { hookdError } from '../errors.js';
import type { Logger } from '../log.js';
import { createLogRetention, type DeliveryOutcome, type RunRecord, type StoreBackend } from '../store/index.js';
import type { BreakerView } from '../views.js';
import { type Alerts, alertSettingsOf, createAlerts, type HookOutcomes } from './alerts/index.js';
import { createPromptBudgets } from './attempts/index.js';
import { createDelivery, createRedeliveries } from './delivery/index.js';
import { createHeartbeat, createOwnedHeartbeat } from './heartbeat/index.js';
import { type BreakerSnapshot, breakerViews, modelTarget, type Target, type TargetLimits } from './isolation/index.js';
import type { ChatChannel, ModelRouter } from './ports.js';
import { createPruneReport } from './prune-report.js';
import {
  type ActivityFeed,
  type AdminQueries,
  createActivityFeed,
  createAdminQueries,
  requestViewOf,
} from './queries/index.js';
import {
  type CancelAnswer,
  cancelRun,
  createClaimedRunQueue,
  createIngressPressure,
  createRunQueue,
  sourceOf,
} from './runs/index.js';
import { createRuntimeSlots } from './slots.js';

export interface RuntimeOptions {
  readonly config: Config;
  /** The store the gateway runs on (`sqliteBackend`, or PostgreSQL's). */
  readonly backend: StoreBackend;
  readonly log: Logger;
  /** The model port: every provider a run or heartbeat may call. */
  readonly models: ModelRouter;
  /** The configured channels by id, in the config's order (docs/channels.md). */
  readonly channels: ReadonlyMap<string, ChatChannel>;
  /** Run slots a mapping's runs hold at once, at most, by mapping id (its `maxConcurrent`). */
  readonly mappingLimits?: ReadonlyMap<string, number>;
  /**
   * Tries in flight at once per provider (across its models) and per channel (its id); default: a
   * provider `agents.defaults.maxConcurrentRuns`, a channel 4 (docs/runtime.md#fault-isolation).
   */
  readonly limits?: TargetLimits;
  readonly onDelivery?: (outcome: DeliveryOutcome) => void;
  /** Time for leases, heartbeats, run limits, retries, pruning and alert windows (tests move it). */
  readonly clock?: Clock;
  /** The console's address for alert links (`http://host:port/ui/`), read when an alert is made. */
  readonly consoleUrl?: () => string;
}
/** What a 503 for a full run queue asks the sender to wait. */
const QUEUE_RETRY_AFTER_S = 30;
const PURGE_EVERY_MS = 10 * 60 * 1000;
const DAY_MS = 86_400_000;
/**
 * Under ingress pressure a run starts at most every 50 ms (20 a second), so that accepting keeps
 * the CPU. Measured (A/B, interleaved rounds, runs against an instant model): `/hooks/agent`
 * answered 14,600-20,000 req/s at 55-57 µs of CPU each with the spacing, 13,300-17,100 at
 * 71 µs without; holding runs to one at a time as well changed nothing measurable.
 */
const RUN_SPACING_UNDER_PRESSURE_MS = 50;
/** The back half of the core loop, as the gateway drives it. */
export interface Runtime {
  /** The port the HTTP layer hands accepted actions to. */
  readonly sink: ActionSink;
  /** What the hook routes report for alerts; absent while alerts are off (docs/operations.md#alerts). */
  readonly outcomes?: HookOutcomes;
  /** Read models of the admin API. */
  readonly queries: AdminQueries;
  /** New requests and run updates, for the live log. */
  readonly activity: ActivityFeed;
  /** Delivers a run's reply again after its delivery failed (409 otherwise). */
  redeliver(runId: string): Promise<DeliveryOutcome>;
  /** Cancels an unfinished run (docs/runtime.md#cancel); 404 unknown, 409 RUN_FINISHED when over. */
  cancel(runId: string): Promise<CancelAnswer>;
  /** This node's circuit breakers, with the runs and deliveries waiting for each. */
  breakers(): BreakerView[];
  /** Agent runs queued or executing. */
  readonly queueDepth: number;
  /** Resumes unfinished runs and starts periodic heartbeats. */
  start(): Promise<void>;
  /** Stops taking work; aborts model calls and deliveries in flight (they resume at the next start). */
  stop(): Promise<void>;
}

/** The back half of the core loop: main session, heartbeats, agent runs, delivery. */
export function createRuntime(options: RuntimeOptions): Runtime {
  const { config, backend, log } = options;
  const clock = options.clock ?? systemClock;
  const { data } = backend;
  const defaults = config.agents.defaults;
  // Alert messages name a destination's breaker: the slots, made below, have them.
  const alerts = alertsOf(options, clock, (target) => slots.breakerOf(target));
  // Alerts count every model try and delivery; they send through the bare chat channel.
  const models = alerts?.watchModels(options.models) ?? options.models;
  const onDelivery = (outcome: DeliveryOutcome) => {
    options.onDelivery?.(outcome);
    alerts?.delivered(outcome);
  };
  const onAttempt = alerts ? { onAttempt: alerts.attempted } : {};
  const delivery = createDelivery({
    channels: alerts?.watchChannels(options.channels) ?? options.channels,
    ackMaxChars: defaults.heartbeat.ackMaxChars,
    meta: backend.meta,
    log,
    clock,
    onOutcome: onDelivery,
  });
  const { share } = backend;
  // Runs start spaced while hook requests saturate the event loop (see pressure.ts).
  const pressure = createIngressPressure({ onRelease: () => runs.kick() });
  // One try holds one slot; a wait between tries holds none (docs/runtime.md#fault-isolation).
  const { slots, heartbeatGate, gateOf } = createRuntimeSlots({
    runSlots: defaults.maxConcurrentRuns,
    ...(options.limits ? { limits: options.limits } : {}),
    ...(options.mappingLimits ? { mappingLimits: options.mappingLimits } : {}),
    startSpacingMs: () => (pressure.high ? RUN_SPACING_UNDER_PRESSURE_MS : 0),
    clock,
    log,
    ...(alerts ? { onBreaker: alerts.breakerChanged } : {}),
  });
  // What each model is sent at most: a context-length refusal to a run or a heartbeat shrinks both.
  const budgets = createPromptBudgets(log.child({ component: 'models' }));
  const makeHeartbeat = () =>
    createHeartbeat({
      store: data,
      models,
      delivery,
      model: defaults.model,
      timeoutSeconds: defaults.timeoutSeconds,
      everyMs: parseDurationMs(defaults.heartbeat.every),
      maxPromptChars: defaults.heartbeat.maxPromptChars,
      budgets,
      log,
      clock,
      gate: heartbeatGate,
      ...(defaults.thinking ? { thinking: defaults.thinking } : {}),
      ...(defaults.heartbeat.prompt ? { prompt: defaults.heartbeat.prompt } : {}),
    });
  // On a shared store, one node at a time runs the heartbeat (docs/scale.md).
  const owned = share ? createOwnedHeartbeat({ share, make: makeHeartbeat, log, clock }) : undefined;
  const heartbeat = owned ?? makeHeartbeat();
  const activity = createActivityFeed();
  // Why a run waits: as the node holding it knows, else this node's breaker of its model.
  const waitingOf = (run: RunRecord) => {
    const known = runs.waitOf(run.id);
    if (known !== undefined || (run.status !== 'queued' && run.status !== 'running')) return known;
    const breaker = slots.breakerOf(modelTarget(run.model));
    return breaker?.state === 'open' && breaker.openUntil !== undefined
      ? `breaker open for ${run.model} until ${new Date(breaker.openUntil).toISOString()}`
      : undefined;
  };
  const queries = createAdminQueries(data, clock.now, waitingOf);
  // Read only while a stream listens (the read is a round trip on a shared store).
  const publishRun = (runId: string) => {
    if (activity.subscribers === 0) return;
    queries.runItem(runId).then(
      (run) => run && activity.publish(() => ({ kind: 'run', run })),
      (err: unknown) => log.warn({ err, runId }, 'reading a run for the live stream failed'),
    );
  };
  const runOptions = {
    store: data,
    onRunUpdate: publishRun,
    slots,
    models,
    delivery,
    heartbeat,
    maxConcurrent: defaults.maxConcurrentRuns,
    defaultTimeoutSeconds: defaults.timeoutSeconds,
    maxPromptChars: defaults.maxPromptChars,
    budgets,
    log,
    clock,
    ...onAttempt,
    ...(defaults.thinking ? { defaultThinking: defaults.thinking } : {}),
  };
  // On a shared store, runs are claimed under leases by whichever node has room (docs/scale.md).
  const runs = share ? createClaimedRunQueue({ ...runOptions, share }) : createRunQueue(runOptions);
  let unlisten: (() => Promise<void>) | undefined;
  const logged = config.hooks.log;
  // One policy for the request log, the kept failures and expired idempotency keys, applied as
  // rows are added and every 10 minutes (docs/operations.md#retention).
  const report = createPruneReport(log, clock);
  const retention = createLogRetention(
    data.log,
    {
      maxAgeMs: logged.retentionDays * DAY_MS,
      maxRows: logged.maxRows,
      maxBytes: logged.maxBytes,
      refusedShare: logged.refusedShare,
    },
    {
      onPass: (outcome) => report.passed(outcome),
      onError: (err) => log.warn({ err }, 'pruning the request log failed'),
    },
  );
  const sink: ActionSink = backend.createSink({
    retention,
    idempotencyTtlSeconds: config.hooks.idempotency.ttlSeconds,
    onError: (err) => log.error({ err }, 'scheduling committed actions failed; they run at the next start'),
    onRecordError: (err) => log.warn({ err }, 'a request log record was not written'),
    onRecorded: (record) => activity.publish(() => ({ kind: 'request', request: requestViewOf(record) })),
    admit(actions) {
      const newRuns = actions.filter((a) => a.kind === 'agent').length;
      if (newRuns > 0 && runs.depth + newRuns > defaults.maxQueuedRuns) {
        throw hookdError('QUEUE_FULL', undefined, { headers: { 'retry-after': String(QUEUE_RETRY_AFTER_S) } });
      }
    },
    onCommitted(actions, accepted) {
      pressure.accepted();
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
    },
  });
  let stopPurging: Cancel | undefined;
  const purge = async () => {
    try {
      report.passed(await retention.enforce(), true);
    } catch (err) {
      log.warn({ err }, 'pruning the request log failed');
    }
  };
  const redeliveries = createRedeliveries({
    store: data,
    delivery,
    log,
    onRunUpdate: publishRun,
    gate: (run) => gateOf(sourceOf(run)),
    ...onAttempt,
  });
  return {
    sink,
    ...(alerts ? { outcomes: alerts.outcomes } : {}),
    queries,
    activity,
    redeliver: redeliveries.redeliver,
    cancel: (runId) => cancelRun(data, runs, runId),
    breakers: () => breakerViews(slots.breakers()),
    get queueDepth() {
      return runs.depth;
    },
    async start(): Promise<void> {
      await alerts?.start();
      pressure.start();
      if (share) unlisten = await share.listen({ runs: runs.kick, heartbeat: () => owned?.requested() });
      const resumed = await runs.resume();
      if (resumed > 0) log.info({ runs: resumed }, 'resuming unfinished runs');
      await heartbeat.start();
      void purge();
      stopPurging = clock.setInterval(() => void purge(), PURGE_EVERY_MS);
    },
    async stop(): Promise<void> {
      // First: what a stop aborts is no failure to alert about.
      await alerts?.stop();
      stopPurging?.();
      await retention.idle();
      redeliveries.stop();
      pressure.stop();
      await runs.stop();
      await heartbeat.stop();
      slots.stop();
      await unlisten?.();
    },
  };
}

/** The gateway's alerts when `hooks.alerts` is on (docs/operations.md#alerts). */
function alertsOf(
  options: RuntimeOptions,
  clock: Clock,
  breakerOf: (target: Target) => BreakerSnapshot | undefined,
): Alerts | undefined {
  const settings = alertSettingsOf(options.config);
  const channel = settings && options.channels.get(settings.channel);
  if (!settings || !channel) return undefined;
  return createAlerts({
    settings,
    channel,
    store: options.backend.data,
    consoleUrl: options.consoleUrl ?? (() => ''),
    log: options.log,
    clock,
    shared: options.backend.share !== undefined,
    breakerOf,
  });
}
