import type { Logger } from '../../log.js';
import type { SessionMessage } from '../../store/index.js';

/** The least a context-length refusal shrinks a model's budget to (the configuration's floor too). */
export const MIN_PROMPT_CHARS = 10_000;
/** An older message is kept shortened only when at least this much of it fits. */
const MIN_SHORTENED_CHARS = 1_000;

/** The characters of a request's messages. */
export const charsOf = (messages: readonly SessionMessage[]): number =>
  messages.reduce((sum, m) => sum + m.content.length, 0);

/** `text` cut to `maxChars`, its end replaced by a note of how much was left out. */
export function shortened(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const keep = Math.max(0, maxChars - 100);
  return `${text.slice(0, keep)} … [truncated by hookd: ${text.length - keep} of ${text.length} characters left out]`;
}

/**
 * The newest of `history` that fits in `maxChars` (docs/runtime.md#context-length): the oldest
 * messages go first, and the oldest one kept may be shortened to the room left. It never starts
 * with a reply whose question was left out.
 */
export function historyWithin(history: readonly SessionMessage[], maxChars: number): SessionMessage[] {
  const kept: SessionMessage[] = [];
  let room = maxChars;
  for (let i = history.length - 1; i >= 0; i--) {
    const message = history[i] as SessionMessage;
    if (message.content.length <= room) {
      kept.push(message);
      room -= message.content.length;
      continue;
    }
    if (room >= MIN_SHORTENED_CHARS) kept.push({ role: message.role, content: shortened(message.content, room) });
    break;
  }
  kept.reverse();
  while (kept[0]?.role === 'assistant') kept.shift();
  return kept;
}

/**
 * What each model is sent at most, in characters (docs/runtime.md#context-length): the
 * configured budget, or less once the model refused a request as too long for its context.
 * Learned per model reference and kept for the life of the process.
 */
export interface PromptBudgets {
  /** The budget of a request to `model`: `configured`, or the smaller one a refusal taught. */
  of(model: string, configured: number): number;
  /**
   * `model` refused a request of `sentChars` as too long: its later requests hold at most half
   * of that, never under 10,000. Returns the new budget, or undefined when nothing smaller is left.
   */
  refused(model: string, sentChars: number): number | undefined;
}

/** Budgets that start at the configuration's and halve on each context-length refusal. */
export function createPromptBudgets(log: Logger): PromptBudgets {
  const learned = new Map<string, number>();
  return {
    of: (model, configured) => Math.min(configured, learned.get(model) ?? configured),
    refused(model, sentChars) {
      const before = learned.get(model);
      if (sentChars <= MIN_PROMPT_CHARS) {
        log.warn({ model, sentChars }, 'the model refused its context at the smallest prompt budget');
        return undefined;
      }
      // Two requests refused at once teach the smaller of their halves.
      const next = Math.min(Math.max(MIN_PROMPT_CHARS, Math.floor(sentChars / 2)), before ?? Number.POSITIVE_INFINITY);
      learned.set(model, next);
      log.warn({ model, sentChars, maxPromptChars: next }, 'the model refused its context; later requests are smaller');
      return next;
    },
  };
}
