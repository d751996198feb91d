import type { ActionSink } from '../actions/index.js';
import { type ChatChannel, createChatnetChannel } from '../channels/index.js';
import { type Config, parseDurationMs } from '../config/index.js';
import type { Logger } from '../log.js';
import { createModelRouter, type ModelRouter } from '../providers/index.js';
import type { Store } from '../store/index.js';
import { createDelivery } from './delivery.js';
import { createHeartbeat } from './heartbeat.js';
import { createAdminQueries } from './queries.js';
import { createRunQueue } from './runs.js';
import { createStoreSink } from './sink.js';

export { HEARTBEAT_OK, isAckOnly, NO_REPLY } from './delivery.js';
export { DEFAULT_HEARTBEAT_PROMPT, heartbeatMessage } from './heartbeat.js';
export { createAdminQueries } from './queries.js';
export { SUMMARY_MAX_CHARS, summaryText } from './runs.js';
export { findInjectionPhrases, SECURITY_NOTICE, sanitizeMarkers, wrapExternalContent } from './safety.js';
export { createStoreSink, MAIN_SESSION } from './sink.js';

export interface RuntimeOptions {
  readonly config: Config;
  readonly store: Store;
  readonly log: Logger;
  /** Defaults to the configured providers. */
  readonly models?: ModelRouter;
}

/** The back half of the core loop: main session, heartbeats, agent runs, delivery. */
export function createRuntime(options: RuntimeOptions) {
  const { config, store, log } = options;
  const defaults = config.agents.defaults;
  const models = options.models ?? createModelRouter(config);
  const channels = new Map<string, ChatChannel>();
  if (config.channels.chatnet) channels.set('chatnet', createChatnetChannel(config.channels.chatnet));
  const delivery = createDelivery({
    channels,
    ackMaxChars: defaults.heartbeat.ackMaxChars,
    meta: store.meta,
    log,
    ...(config.channels.chatnet?.defaultTo ? { chatnetDefaultTo: config.channels.chatnet.defaultTo } : {}),
  });
  const heartbeat = createHeartbeat({
    store,
    models,
    delivery,
    model: defaults.model,
    timeoutSeconds: defaults.timeoutSeconds,
    everyMs: parseDurationMs(defaults.heartbeat.every),
    log,
    ...(defaults.thinking ? { thinking: defaults.thinking } : {}),
    ...(defaults.heartbeat.prompt ? { prompt: defaults.heartbeat.prompt } : {}),
  });
  const runs = createRunQueue({
    store,
    models,
    delivery,
    heartbeat,
    maxConcurrent: defaults.maxConcurrentRuns,
    defaultTimeoutSeconds: defaults.timeoutSeconds,
    log,
    ...(defaults.thinking ? { defaultThinking: defaults.thinking } : {}),
  });
  const sink: ActionSink = createStoreSink(store, {
    onCommitted(actions, accepted) {
      accepted.forEach((a, i) => {
        if (a.kind === 'agent') runs.enqueue(a.runId, a.sessionKey);
        else if (actions[i]?.kind === 'wake' && a.mode === 'now') heartbeat.request();
      });
    },
  });

  return {
    sink,
    queries: createAdminQueries(store),
    heartbeat,
    runs,
    /** Resumes unfinished runs and starts periodic heartbeats. */
    start(): void {
      const resumed = runs.resume();
      if (resumed > 0) log.info({ runs: resumed }, 'resuming unfinished runs');
      heartbeat.start();
    },
    async stop(): Promise<void> {
      await runs.stop();
      await heartbeat.stop();
    },
  };
}

export type Runtime = ReturnType<typeof createRuntime>;
