import { MAIN_SESSION } from '../../action-shape.js';
import { type Cancel, systemClock } from '../../clock.js';
import { hookdError } from '../../errors.js';
import { causeOf, isStoreUnavailable } from '../../store/index.js';
import { createHeartbeatTurn, type HeartbeatTurnOptions } from './heartbeat-turn.js';

export interface HeartbeatOptions extends HeartbeatTurnOptions {
  /** 0 turns periodic heartbeats off. */
  readonly everyMs: number;
  /** Requests arriving within this window share one heartbeat (docs/runtime.md#wake--main-session--heartbeat). */
  readonly coalesceMs?: number;
}

/** The main session's heartbeat turns (docs/runtime.md#wake--main-session--heartbeat). */
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
  const { store } = options;
  const log = options.log.child({ component: 'heartbeat' });
  const coalesceMs = options.coalesceMs ?? 250;
  const clock = options.clock ?? systemClock;
  const turn = createHeartbeatTurn({ ...options, log });
  let pendingTimer: Cancel | undefined;
  let stopPeriodic: Cancel | undefined;
  let running: Promise<void> | undefined;
  let again = false;
  let stopped = false;
  const shutdown = new AbortController();

  function run(reason: 'request' | 'periodic'): void {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = turn(reason, shutdown.signal)
      .then((more) => {
        if (more) again = true;
      })
      .catch((err: unknown) =>
        isStoreUnavailable(err)
          ? log.warn({ cause: causeOf(err) }, 'heartbeat interrupted: the store is out of reach; its events wait')
          : log.error({ err }, 'heartbeat crashed'),
      )
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
    pendingTimer = clock.setTimeout(() => {
      pendingTimer = undefined;
      run('request');
    }, coalesceMs);
  }

  return {
    request,
    async start(): Promise<void> {
      if (options.everyMs > 0) stopPeriodic = clock.setInterval(() => run('periodic'), options.everyMs);
      // Events left unconsumed by a previous process are handled now, not at the next tick.
      if ((await store.events.countPending(MAIN_SESSION)) > 0) request();
    },
    async stop(): Promise<void> {
      stopped = true;
      pendingTimer?.();
      stopPeriodic?.();
      shutdown.abort(hookdError('SHUTTING_DOWN'));
      await running;
    },
  };
}
