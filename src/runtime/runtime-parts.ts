import type { Clock } from '../clock.js';
import { type Config, parseDurationMs } from '../config/index.js';
import type { Logger } from '../log.js';
import type { DeliveryOutcome, RunRecord, StoreBackend } from '../store/index.js';
import type { Alerts } from './alerts/index.js';
import type { PromptBudgets, TryGate } from './attempts/index.js';
import { createDelivery, type Delivery } from './delivery/index.js';
import { createHeartbeat, type Heartbeat } from './heartbeat/index.js';
import { modelTarget, type TrySlots } from './isolation/index.js';
import type { ChatChannel, ModelRouter } from './ports.js';
import type { ActivityFeed, AdminQueries } from './queries/index.js';
import { createClaimedRunQueue, createRunQueue, type RunQueue } from './runs/index.js';

/** What the runtime's parts are made from (the options of the runtime, in part). */
export interface PartsOptions {
  readonly config: Config;
  /** The store the gateway runs on (`sqliteBackend`, or PostgreSQL's). */
  readonly backend: StoreBackend;
  readonly log: Logger;
  /** The configured channels by id, in the config's order (docs/channels.md). */
  readonly channels: ReadonlyMap<string, ChatChannel>;
  readonly onDelivery?: (outcome: DeliveryOutcome) => void;
}

/** What runs and the heartbeat share: the model port, the delivery, the prompt budgets and the clock. */
export interface SharedParts {
  readonly models: ModelRouter;
  readonly delivery: Delivery;
  readonly budgets: PromptBudgets;
  readonly clock: Clock;
}

/** The delivery of replies; alerts hear of each outcome and of each channel's failed tries. */
export function deliveryOf(options: PartsOptions, clock: Clock, alerts: Alerts | undefined): Delivery {
  const onOutcome = (outcome: DeliveryOutcome, runId?: string) => {
    options.onDelivery?.(outcome);
    alerts?.delivered(outcome, runId);
  };
  return createDelivery({
    channels: alerts?.watchChannels(options.channels) ?? options.channels,
    ackMaxChars: options.config.agents.defaults.heartbeat.ackMaxChars,
    meta: options.backend.meta,
    log: options.log,
    clock,
    onOutcome,
  });
}

/** Makes the main session's heartbeat, its tries through `gate` (made again each time a node takes its lease). */
export function heartbeatMaker(options: PartsOptions, shared: SharedParts, gate: TryGate): () => Heartbeat {
  const defaults = options.config.agents.defaults;
  return () =>
    createHeartbeat({
      store: options.backend.data,
      models: shared.models,
      delivery: shared.delivery,
      model: defaults.model,
      timeoutSeconds: defaults.timeoutSeconds,
      everyMs: parseDurationMs(defaults.heartbeat.every),
      maxPromptChars: defaults.heartbeat.maxPromptChars,
      budgets: shared.budgets,
      log: options.log,
      clock: shared.clock,
      gate,
      ...(defaults.thinking ? { thinking: defaults.thinking } : {}),
      ...(defaults.heartbeat.prompt ? { prompt: defaults.heartbeat.prompt } : {}),
    });
}

/** What the run queue takes besides the configuration: the shared parts, the slots and what it tells. */
export interface RunParts extends SharedParts {
  readonly slots: TrySlots;
  readonly heartbeat: Heartbeat;
  readonly onRunUpdate: (runId: string) => void;
  readonly onAttempt?: Alerts['attempted'];
}

/** The agent runs: on a shared store claimed under leases by whichever node has room (docs/scale.md). */
export function runQueueOf(options: PartsOptions, parts: RunParts): RunQueue {
  const defaults = options.config.agents.defaults;
  const { share } = options.backend;
  const runOptions = {
    store: options.backend.data,
    maxConcurrent: defaults.maxConcurrentRuns,
    defaultTimeoutSeconds: defaults.timeoutSeconds,
    maxPromptChars: defaults.maxPromptChars,
    log: options.log,
    ...parts,
    ...(defaults.thinking ? { defaultThinking: defaults.thinking } : {}),
  };
  return share ? createClaimedRunQueue({ ...runOptions, share }) : createRunQueue(runOptions);
}

/** Why a run waits: as the node holding it knows, else this node's breaker of its model. */
export function runWaitOf(
  runs: Pick<RunQueue, 'waitOf'>,
  slots: Pick<TrySlots, 'breakerOf'>,
  run: RunRecord,
): string | undefined {
  const known = runs.waitOf(run.id);
  if (known !== undefined || (run.status !== 'queued' && run.status !== 'running')) return known;
  const breaker = slots.breakerOf(modelTarget(run.model));
  return breaker?.state === 'open' && breaker.openUntil !== undefined
    ? `breaker open for ${run.model} until ${new Date(breaker.openUntil).toISOString()}`
    : undefined;
}

/** Tells the live stream of a run's new state, read only while a stream listens (a round trip on a shared store). */
export function runPublisher(activity: ActivityFeed, queries: AdminQueries, log: Logger): (runId: string) => void {
  return (runId) => {
    if (activity.subscribers === 0) return;
    queries.runItem(runId).then(
      (run) => run && activity.publish(() => ({ kind: 'run', run })),
      (err: unknown) => log.warn({ err, runId }, 'reading a run for the live stream failed'),
    );
  };
}
