import type { AlertCondition } from '../../alert-views.js';
import type { BreakerSnapshot } from '../isolation/index.js';
import type { MappingAnswer } from './types.js';
import { MAX_TIMES } from './watch.js';

/**
 * The words of alert messages (docs/operations.md#alerts). A last error is made of codes, HTTP
 * statuses, source positions and hookd's own phrases only: never payload text, never a server's
 * answer (which may echo a payload), never a credential.
 */

const UNITS: readonly [number, string][] = [
  [86_400_000, 'd'],
  [3_600_000, 'h'],
  [60_000, 'min'],
  [1000, 's'],
];

/** `10 min`, `2 h`, `30 s`, `1500 ms`: a window as a person reads it. */
export function durationText(ms: number): string {
  for (const [unit, name] of UNITS) if (ms >= unit && ms % unit === 0) return `${ms / unit} ${name}`;
  return `${ms} ms`;
}

/** A request's failure: its code, status and (a transform that threw) its author's position. */
export function answerError(answer: MappingAnswer): string {
  const where = answer.where === undefined ? '' : ` at ${answer.where}`;
  return `${answer.code ?? 'error'} (HTTP ${answer.status})${where}`;
}

const counted = (n: number) => (n >= MAX_TIMES ? `${n} or more` : String(n));
const times = (n: number) => `${counted(n)} time${n === 1 ? '' : 's'}`;

/** What happened, in the message's first line. */
function firingLine(condition: AlertCondition, source: string, count: number, window: string): string {
  switch (condition) {
    case 'mappingFailures':
      return `mapping ${source} failed ${times(count)} in ${window}`;
    case 'signatureFailures':
      return `signatures for mapping ${source} failed ${times(count)} in ${window}`;
    case 'modelUnreachable':
      return `model ${source} failed every try for ${window} (${counted(count)} tr${count === 1 ? 'y' : 'ies'})`;
    case 'deliveryFailures':
      return source === UNROUTED
        ? `${counted(count)} replies found no route in ${window}`
        : `${counted(count)} deliveries to ${source} failed in ${window}`;
  }
}

/** The source of delivery failures that had no channel to go to. */
export const UNROUTED = 'unrouted';

/** The subject of a recovery line. */
function subject(condition: AlertCondition, source: string): string {
  switch (condition) {
    case 'mappingFailures':
      return `mapping ${source}`;
    case 'signatureFailures':
      return `signatures for mapping ${source}`;
    case 'modelUnreachable':
      return `model ${source}`;
    case 'deliveryFailures':
      return source === UNROUTED ? 'reply routing' : `deliveries to ${source}`;
  }
}

/** The message of a firing: what, how often, the last error, its destination's breaker and where to look. */
export function firingText(
  condition: AlertCondition,
  source: string,
  facts: { count: number; windowMs: number; lastError?: string; breaker?: BreakerSnapshot; link: string },
): string {
  return [
    `hookd alert: ${firingLine(condition, source, facts.count, durationText(facts.windowMs))}`,
    ...(facts.lastError === undefined ? [] : [`last error: ${facts.lastError}`]),
    ...(facts.breaker === undefined ? [] : [breakerLine(facts.breaker)]),
    `console: ${facts.link}`,
  ].join('\n');
}

/**
 * A destination's breaker while it holds tries back (docs/operations.md#alerts): `breaker: open
 * until 2026-…Z, its runs and deliveries wait`, or half-open while a probe goes.
 */
export function breakerLine(breaker: BreakerSnapshot): string {
  if (breaker.state === 'half-open') return 'breaker: half-open, one probe at a time';
  const until = breaker.openUntil === undefined ? '' : ` until ${new Date(breaker.openUntil).toISOString()}`;
  return `breaker: open${until}, its runs and deliveries wait`;
}

/**
 * The message of a recovery: `why` is what showed it (`it answered 202`), or undefined when a
 * whole window passed without a failure.
 */
export function recoveryText(
  condition: AlertCondition,
  source: string,
  facts: { failures: number; windowMs: number; why?: string; link: string },
): string {
  const why = facts.why ?? `no failure for ${durationText(facts.windowMs)}`;
  return [
    `hookd recovered: ${subject(condition, source)} (${why}; ${counted(facts.failures)} failure${facts.failures === 1 ? '' : 's'} before)`,
    `console: ${facts.link}`,
  ].join('\n');
}
