import type { ActionSink } from '../actions/index.js';
import { type Clock, systemClock } from '../clock.js';
import type { Logger } from '../log.js';
import type { DeliveryOutcome, StoreContract, WorkShare } from '../store/index.js';
import type { BreakerView } from '../views.js';
import { type Alerts, alertSettingsOf, createAlerts, type HookOutcomes } from './alerts/index.js';
import { createPromptBudgets } from './attempts/index.js';
import { createRedeliveries } from './delivery/index.js';
import { createOwnedHeartbeat, type Heartbeat } from './heartbeat/index.js';
import {
  type BreakerSnapshot,
  breakerViews,
  type Target,
  type TargetLimits,
  type TrySlots,
} from './isolation/index.js';
import { createLogPruning, type LogPruning } from './log-pruning.js';
import type { ModelRouter } from './ports.js';
import { type ActivityFeed, type AdminQueries, createActivityFeed, createAdminQueries } from './queries/index.js';
import {
  type CancelAnswer,
  cancelRun,
  createIngressPressure,
  type IngressPressure,
  type RunQueue,
  sourceOf,
} from './runs/index.js';
import { deliveryOf, heartbeatMaker, type PartsOptions, runPublisher, runQueueOf, runWaitOf } from './runtime-parts.js';
import { createRuntimeSink, recordErrorLog } from './runtime-sink.js';
import { createRuntimeSlots } from './slots.js';

export interface RuntimeOptions extends PartsOptions {
  /** The model port: every provider a run or heartbeat may call. */
  readonly models: ModelRouter;
  /** Run slots a mapping's runs hold at once, at most, by mapping id (its `maxConcurrent`). */
  readonly mappingLimits?: ReadonlyMap<string, number>;
  /**
   * Tries in flight at once per provider (across its models) and per channel (its id); default:
   * each one fewer than `agents.defaults.maxConcurrentRuns` (docs/runtime.md#fault-isolation).
   */
  readonly limits?: TargetLimits;
  /** Time for leases, heartbeats, run limits, retries, pruning and alert windows (tests move it). */
  readonly clock?: Clock;
  /** The console's address for alert links (`http://host:port/ui/`), read when an alert is made. */
  readonly consoleUrl?: () => string;
}
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
  const { data, share } = backend;
  const defaults = config.agents.defaults;
  // Alert messages name a destination's breaker: the slots, made below, have them.
  const alerts = alertsOf(options, clock, (target) => slots.breakerOf(target));
  // Alerts count every model try and delivery; they send through the bare chat channel.
  const models = alerts?.watchModels(options.models) ?? options.models;
  const delivery = deliveryOf(options, clock, alerts);
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
  const shared = { models, delivery, budgets: createPromptBudgets(log.child({ component: 'models' })), clock };
  const makeHeartbeat = heartbeatMaker(options, shared, heartbeatGate);
  // On a shared store, one node at a time runs the heartbeat (docs/scale.md).
  const owned = share ? createOwnedHeartbeat({ share, make: makeHeartbeat, log, clock }) : undefined;
  const heartbeat = owned ?? makeHeartbeat();
  const activity = createActivityFeed();
  const queries = createAdminQueries(data, clock.now, (run) => runWaitOf(runs, slots, run));
  const publishRun = runPublisher(activity, queries, log);
  const onAttempt = alerts ? { onAttempt: alerts.attempted } : {};
  const runs = runQueueOf(options, { ...shared, slots, heartbeat, onRunUpdate: publishRun, ...onAttempt });
  const pruning = createLogPruning(config.hooks.log, data, log, clock);
  const { retention } = pruning;
  const recordErrors = recordErrorLog(log, clock);
  const sink = createRuntimeSink({
    config,
    backend,
    retention,
    activity,
    runs,
    heartbeat,
    pressure,
    log,
    recordErrors,
  });
  const gate = (run: { readonly mappingId?: string }) => gateOf(sourceOf(run));
  const redeliveries = createRedeliveries({ store: data, delivery, log, onRunUpdate: publishRun, gate, ...onAttempt });
  const parts: RuntimeParts = {
    ...{ alerts, pressure, share, owned, runs, heartbeat, pruning, redeliveries, slots, log, recordErrors },
    store: data,
    unlisten: undefined,
  };
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
    start: () => startRuntime(parts),
    stop: () => stopRuntime(parts),
  };
}

/** What the runtime's start and stop go through, in their order. */
interface RuntimeParts {
  readonly alerts: Alerts | undefined;
  readonly pressure: IngressPressure;
  readonly share: WorkShare | undefined;
  readonly owned: ReturnType<typeof createOwnedHeartbeat> | undefined;
  readonly runs: RunQueue;
  readonly heartbeat: Heartbeat;
  readonly pruning: LogPruning;
  readonly redeliveries: { stop(): void };
  readonly slots: TrySlots;
  readonly log: Logger;
  readonly recordErrors: { flush(): void };
  readonly store: StoreContract;
  /** Stops listening to the other nodes (a shared store), once started. */
  unlisten: (() => Promise<void>) | undefined;
}

/** Resumes unfinished runs and starts the heartbeat, the alerts and the log's timed pruning. */
async function startRuntime(parts: RuntimeParts): Promise<void> {
  const { runs, share, owned } = parts;
  await parts.alerts?.start();
  parts.pressure.start();
  if (share) parts.unlisten = await share.listen({ runs: runs.kick, heartbeat: () => owned?.requested() });
  const resumed = await runs.resume();
  if (resumed > 0) parts.log.info({ runs: resumed }, 'resuming unfinished runs');
  await parts.heartbeat.start();
  parts.pruning.start();
}

/** Stops taking work; the model calls and deliveries in flight are aborted (they resume at the next start). */
async function stopRuntime(parts: RuntimeParts): Promise<void> {
  // First: what a stop aborts is no failure to alert about.
  await parts.alerts?.stop();
  await parts.pruning.stop();
  parts.redeliveries.stop();
  parts.pressure.stop();
  await parts.runs.stop();
  await parts.heartbeat.stop();
  parts.slots.stop();
  await parts.unlisten?.();
  // The runs' last progress (attempts, waits) is committed before the store closes.
  await parts.store.group.flush();
  parts.recordErrors.flush();
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
