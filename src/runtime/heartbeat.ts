import type { ThinkingLevel } from '../action-shape.js';
import { hookdError } from '../errors.js';
import type { Logger } from '../log.js';
import type { EventRecord, Store } from '../store/index.js';
import type { Delivery } from './delivery.js';
import type { ModelRouter } from './ports.js';
import { wrapExternalContent } from './safety.js';
import { MAIN_SESSION } from './sink.js';
import { timeoutSignal } from './timeout.js';

export const DEFAULT_HEARTBEAT_PROMPT =
  'Heartbeat check. The system events below arrived since the last check, oldest first. Tell the user ' +
  'what needs their attention, briefly. If nothing does, reply with exactly HEARTBEAT_OK.';

export interface HeartbeatOptions {
  readonly store: Store;
  readonly models: ModelRouter;
  readonly delivery: Delivery;
  readonly model: string;
  readonly thinking?: ThinkingLevel;
  readonly timeoutSeconds: number;
  /** 0 turns periodic heartbeats off. */
  readonly everyMs: number;
  readonly prompt?: string;
  readonly log: Logger;
  /** Requests arriving within this window share one heartbeat (DESIGN §6.1). */
  readonly coalesceMs?: number;
  /** Earlier main-session messages sent as history. */
  readonly historyLimit?: number;
  /** Events shown in one heartbeat turn, oldest first (default 200). */
  readonly maxEventsPerTurn?: number;
  readonly now?: () => number;
}

/** The heartbeat turn's one user message: the prompt, then every pending event (DESIGN §6.3). */
export function heartbeatMessage(prompt: string, events: readonly EventRecord[]): string {
  const line = (e: EventRecord) => `[${new Date(e.createdAt).toISOString()}] ${e.text}`;
  const trusted = events.filter((e) => e.allowUnsafeExternalContent || e.origin === 'system').map(line);
  const untrusted = events.filter((e) => !(e.allowUnsafeExternalContent || e.origin === 'system')).map(line);
  const parts = [prompt];
  if (trusted.length > 0) parts.push(trusted.join('\n'));
  if (untrusted.length > 0) parts.push(wrapExternalContent(untrusted.join('\n'), 'webhook'));
  return parts.join('\n\n');
}

/** The main session's heartbeat turns (DESIGN §6.1, §6.3). */
export interface Heartbeat {
  /** Asks for a heartbeat soon; requests within the coalescing window share it. */
  request(): void;
  /** Starts periodic heartbeats, and handles events a previous process left pending. */
  start(): void;
  /** Stops timers and aborts a turn in flight (its events stay pending). */
  stop(): Promise<void>;
}

/** Heartbeats: coalesced on request, periodic on a timer, one at a time. */
export function createHeartbeat(options: HeartbeatOptions): Heartbeat {
  const { store, models, delivery } = options;
  const log = options.log.child({ component: 'heartbeat' });
  const coalesceMs = options.coalesceMs ?? 250;
  const historyLimit = options.historyLimit ?? 40;
  const maxEvents = options.maxEventsPerTurn ?? 200;
  const now = options.now ?? Date.now;
  let pendingTimer: NodeJS.Timeout | undefined;
  let periodic: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let again = false;
  let stopped = false;
  const shutdown = new AbortController();

  async function beat(reason: 'request' | 'periodic'): Promise<void> {
    // A bounded turn: after an outage the backlog could outgrow the model's context and
    // fail every heartbeat; the rest follows in the next turn.
    const events = store.events.pending(MAIN_SESSION, maxEvents);
    if (events.length === 0) return;
    const content = heartbeatMessage(options.prompt ?? DEFAULT_HEARTBEAT_PROMPT, events);
    const history = store.messages.recent(MAIN_SESSION, historyLimit);
    const timeout = timeoutSignal(options.timeoutSeconds);
    let reply: string;
    try {
      reply = await models.complete(options.model, {
        messages: [...history, { role: 'user', content }],
        ...(options.thinking ? { thinking: options.thinking } : {}),
        signal: AbortSignal.any([timeout, shutdown.signal]),
      });
    } catch (err) {
      if (!shutdown.signal.aborted) {
        log.warn(
          { reason, events: events.length, err: (err as Error).message },
          'heartbeat turn failed; events stay pending',
        );
      }
      return;
    }
    const at = now();
    store.transaction(() => {
      store.messages.append(
        MAIN_SESSION,
        [
          { role: 'user', content },
          { role: 'assistant', content: reply },
        ],
        null,
        at,
      );
      store.events.markConsumed(
        events.map((e) => e.id),
        at,
      );
    });
    if (events.length === maxEvents && store.events.countPending(MAIN_SESSION) > 0) again = true;
    const outcome = await delivery.deliver({ channel: 'last' }, reply, shutdown.signal);
    log.info({ reason, events: events.length, delivery: outcome.status, why: outcome.reason }, 'heartbeat done');
  }

  function run(reason: 'request' | 'periodic'): void {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = beat(reason)
      .catch((err: unknown) => log.error({ err }, 'heartbeat crashed'))
      .finally(() => {
        running = undefined;
        if (again) {
          again = false;
          request();
        }
      });
  }

  function request(): void {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    if (pendingTimer) return;
    pendingTimer = setTimeout(() => {
      pendingTimer = undefined;
      run('request');
    }, coalesceMs);
  }

  return {
    request,
    start(): void {
      if (options.everyMs > 0) periodic = setInterval(() => run('periodic'), options.everyMs);
      // Events left unconsumed by a previous process are handled now, not at the next tick.
      if (store.events.countPending(MAIN_SESSION) > 0) request();
    },
    async stop(): Promise<void> {
      stopped = true;
      clearTimeout(pendingTimer);
      clearInterval(periodic);
      shutdown.abort(hookdError('SHUTTING_DOWN'));
      await running;
    },
  };
}
