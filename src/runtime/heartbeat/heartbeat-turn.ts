import type { ThinkingLevel } from '../../action-shape.js';
import { MAIN_SESSION } from '../../action-shape.js';
import { type Clock, systemClock } from '../../clock.js';
import { isHookdError } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { EventRecord, SessionMessage, StoreContract } from '../../store/index.js';
import {
  charsOf,
  completeWithRetries,
  createPromptBudgets,
  historyWithin,
  type OnFailure,
  type PromptBudgets,
  type TryGate,
} from '../attempts/index.js';
import type { Delivery } from '../delivery/index.js';
import type { ModelRouter } from '../ports.js';
import { wrapExternalContent } from '../safety/index.js';
import { deadline } from '../timeout.js';

export const DEFAULT_HEARTBEAT_PROMPT =
  'Heartbeat check. The system events below arrived since the last check, oldest first. Tell the user ' +
  'what needs their attention, briefly. If nothing does, reply with exactly HEARTBEAT_OK.';

export interface HeartbeatTurnOptions {
  readonly store: StoreContract;
  readonly models: ModelRouter;
  readonly delivery: Delivery;
  readonly model: string;
  readonly thinking?: ThinkingLevel;
  readonly timeoutSeconds: number;
  readonly prompt?: string;
  readonly log: Logger;
  /** Earlier main-session messages sent as history. */
  readonly historyLimit?: number;
  /** Events shown in one heartbeat turn, oldest first (default 200). */
  readonly maxEventsPerTurn?: number;
  /**
   * The whole model request of a turn (history, prompt and events), in characters, at most
   * (default 200,000): history is trimmed first, then events wait for the next turn.
   */
  readonly maxPromptChars?: number;
  /** What each model is sent at most, shared with agent runs (a context refusal shrinks it). */
  readonly budgets?: PromptBudgets;
  /** Time for records, the turn's time limit and the coalescing and periodic timers. */
  readonly clock?: Clock;
  /**
   * Where its model tries and deliveries take their slots: its model's and channel's, never a
   * run slot (docs/runtime.md#fault-isolation).
   */
  readonly gate?: TryGate;
}

/** The heartbeat turn's one user message: the prompt, then every pending event (docs/runtime.md#wake--main-session--heartbeat). */
export function heartbeatMessage(prompt: string, events: readonly EventRecord[]): string {
  const line = (e: EventRecord) => `[${new Date(e.createdAt).toISOString()}] ${e.text}`;
  const trusted = events.filter((e) => e.allowUnsafeExternalContent || e.origin === 'system').map(line);
  const untrusted = events.filter((e) => !(e.allowUnsafeExternalContent || e.origin === 'system')).map(line);
  const parts = [prompt];
  if (trusted.length > 0) parts.push(trusted.join('\n'));
  if (untrusted.length > 0) parts.push(wrapExternalContent(untrusted.join('\n'), 'webhook'));
  return parts.join('\n\n');
}

/** What a line costs besides its text: the `[<ISO time>] ` stamp and the newline. */
const LINE_OVERHEAD = 28;

/**
 * The events one turn shows, oldest first, within `maxChars` of text: at least one, and one
 * too big alone is cut with a note of how much was left out.
 */
export function eventsWithin(events: readonly EventRecord[], maxChars: number): EventRecord[] {
  const shown: EventRecord[] = [];
  let used = 0;
  for (const event of events) {
    const cost = event.text.length + LINE_OVERHEAD;
    if (used + cost <= maxChars) {
      shown.push(event);
      used += cost;
    } else if (shown.length === 0) {
      const keep = Math.max(0, maxChars - LINE_OVERHEAD - 100);
      const note = ` … [truncated by hookd: ${event.text.length - keep} of ${event.text.length} characters left out]`;
      shown.push({ ...event, text: `${event.text.slice(0, keep)}${note}` });
      break;
    } else break;
  }
  return shown;
}

/**
 * One heartbeat turn: shows the model the pending events, records the turn and consumes them
 * in one transaction, then delivers the reply to the last route. Resolves true when more
 * events wait than one turn shows. A failed turn leaves its events pending.
 */
export type HeartbeatTurn = (reason: 'request' | 'periodic', shutdown: AbortSignal) => Promise<boolean>;

/** A wrapper's own characters, and the blank lines between the prompt and the events. */
const FRAME_CHARS = wrapExternalContent('').length + 4;

/** A heartbeat's model request, and the events it shows. */
export interface TurnRequest {
  readonly events: EventRecord[];
  readonly content: string;
  readonly messages: SessionMessage[];
}

/**
 * The turn's request within `budget` characters (docs/runtime.md#context-length): the prompt
 * and as many pending events as fit (oldest first; one too big alone is cut), then as much
 * history as the rest holds. Events come before history: history is trimmed first.
 */
export function turnWithin(
  prompt: string,
  pending: readonly EventRecord[],
  history: readonly SessionMessage[],
  budget: number,
): TurnRequest {
  let room = budget - prompt.length - FRAME_CHARS;
  for (;;) {
    const events = eventsWithin(pending, room);
    const content = heartbeatMessage(prompt, events);
    // Neutralised markers can change the text's length: cut again by what it went over.
    if (content.length > budget && room > LINE_OVERHEAD + 100) {
      room -= content.length - budget;
      continue;
    }
    return {
      events,
      content,
      messages: [...historyWithin(history, budget - content.length), { role: 'user', content }],
    };
  }
}

/** What a heartbeat turn runs with: its options with their defaults, and how a failed try is logged. */
export interface HeartbeatTurnParts {
  readonly options: HeartbeatTurnOptions;
  readonly log: Logger;
  readonly clock: Clock;
  readonly budgets: PromptBudgets;
  readonly prompt: string;
  readonly historyLimit: number;
  readonly maxEvents: number;
  readonly maxChars: number;
  readonly onFailure: OnFailure;
}

/** A heartbeat turn's parts from its options, with their defaults. */
export function heartbeatTurnParts(options: HeartbeatTurnOptions): HeartbeatTurnParts {
  const { log } = options;
  return {
    options,
    log,
    clock: options.clock ?? systemClock,
    budgets: options.budgets ?? createPromptBudgets(log),
    prompt: options.prompt ?? DEFAULT_HEARTBEAT_PROMPT,
    historyLimit: options.historyLimit ?? 40,
    maxEvents: options.maxEventsPerTurn ?? 200,
    maxChars: options.maxPromptChars ?? 200_000,
    onFailure: (attempt, target) => log.warn({ ...target, ...attempt }, `${attempt.kind} attempt failed`),
  };
}

/** Creates the turn of the main session's heartbeat. */
export function createHeartbeatTurn(options: HeartbeatTurnOptions): HeartbeatTurn {
  const parts = heartbeatTurnParts(options);
  return (reason, shutdown) => heartbeatTurn(parts, reason, shutdown);
}

/**
 * Asks the model, at once again with a smaller request after a context-length refusal (until
 * the smallest budget); resolves with the reply and the request it answered.
 */
export async function askModel(
  parts: HeartbeatTurnParts,
  pending: readonly EventRecord[],
  history: readonly SessionMessage[],
  signal: AbortSignal,
): Promise<{ reply: string; request: TurnRequest }> {
  const { options, budgets } = parts;
  for (let budget = budgets.of(options.model, parts.maxChars); ; ) {
    const request = turnWithin(parts.prompt, pending, history, budget);
    try {
      const reply = await completeWithRetries(
        options.models,
        options.model,
        { messages: request.messages, ...(options.thinking ? { thinking: options.thinking } : {}), signal },
        { clock: parts.clock, onFailure: parts.onFailure, ...(options.gate ? { gate: options.gate } : {}) },
      );
      return { reply, request };
    } catch (err) {
      const smaller = isHookdError(err, 'MODEL_CONTEXT_EXCEEDED')
        ? budgets.refused(options.model, charsOf(request.messages))
        : undefined;
      if (smaller !== undefined && !signal.aborted) {
        budget = smaller;
        continue;
      }
      throw err;
    }
  }
}

/** One heartbeat turn (see HeartbeatTurn): resolves true when more events wait than it showed. */
export async function heartbeatTurn(
  parts: HeartbeatTurnParts,
  reason: 'request' | 'periodic',
  shutdown: AbortSignal,
): Promise<boolean> {
  const { options, log, clock, maxEvents } = parts;
  const { store } = options;
  // A bounded turn: after an outage the backlog could outgrow the model's context and
  // fail every heartbeat; the rest follows in the next turn.
  const pending = await store.events.pending(MAIN_SESSION, maxEvents);
  if (pending.length === 0) return false;
  const history = await store.messages.recent(MAIN_SESSION, parts.historyLimit);
  const timeout = deadline(options.timeoutSeconds, shutdown, clock);
  let answered: { reply: string; request: TurnRequest };
  try {
    answered = await askModel(parts, pending, history, timeout.signal);
  } catch (err) {
    if (!shutdown.aborted) {
      const failure = { reason, events: pending.length, err: (err as Error).message };
      log.warn(failure, 'heartbeat turn failed; events stay pending');
    }
    return false;
  } finally {
    timeout.done();
  }
  const { reply, request } = answered;
  const { events, content } = request;
  const at = clock.now();
  const messages = [
    { role: 'user', content },
    { role: 'assistant', content: reply },
  ] as const;
  // Delivered first, then consumed: a stop (or a crash) in the middle of the delivery leaves the
  // events pending, and the heartbeat at the next start delivers them (at least once).
  const outcome = await options.delivery.deliver({ channel: 'last', mainSession: true }, reply, {
    signal: shutdown,
    onAttempt: parts.onFailure,
    ...(options.gate ? { gate: options.gate } : {}),
  });
  if (shutdown.aborted && outcome.status === 'failed') {
    log.info({ reason, events: events.length }, 'heartbeat delivery cut by the stop; events stay pending');
    return false;
  }
  await store.commit((w) => {
    w.messages.append(MAIN_SESSION, messages, null, at);
    w.events.markConsumed(
      events.map((e) => e.id),
      at,
    );
  });
  const more =
    events.length < pending.length ||
    (pending.length === maxEvents && (await store.events.countPending(MAIN_SESSION)) > 0);
  log.info({ reason, events: events.length, delivery: outcome.status, why: outcome.reason }, 'heartbeat done');
  return more;
}
