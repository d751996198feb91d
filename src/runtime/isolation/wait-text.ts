import type { BreakerSnapshot } from './breaker.js';
import { providerOf } from './ledger.js';
import type { Target } from './targets.js';

/** What holds a waiting request back, as the slots see it at one moment. */
export interface WaitContext {
  readonly target?: Target;
  readonly limit?: number;
  readonly inFlight?: number;
  readonly breaker?: BreakerSnapshot;
  readonly runSlot: boolean;
  readonly runs: number;
  readonly runSlots: number;
  readonly source: string;
  readonly sourceLimit: number | undefined;
  readonly sourceInFlight: number;
  /** False while an earlier run of its session is under way. */
  readonly ready: boolean;
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Why a request waits, in the words runs show (docs/runtime.md#waiting): the first thing that
 * holds it back, in the order the slots check them. An open breaker's wait says until when.
 */
export function waitText(c: WaitContext): { reason: string; until?: number; breaker?: true } {
  const { breaker, target } = c;
  if (breaker?.state === 'open' && breaker.openUntil !== undefined)
    return {
      reason: `breaker open for ${breaker.target} until ${iso(breaker.openUntil)}`,
      until: breaker.openUntil,
      breaker: true,
    };
  if (breaker?.state === 'half-open')
    return { reason: `breaker half-open for ${breaker.target}: waiting for its probe`, breaker: true };
  if (c.runSlot && c.runs >= c.runSlots)
    return { reason: `waiting for a run slot (${c.runs} of ${c.runSlots} in use)` };
  if (target && c.limit !== undefined && c.inFlight !== undefined && c.inFlight >= c.limit) {
    const what = target.kind === 'model' ? `provider ${providerOf(target.id)}` : `channel ${target.id}`;
    return { reason: `waiting for a slot of ${what} (${c.inFlight} of ${c.limit} in use)` };
  }
  if (c.runSlot && c.sourceLimit !== undefined && c.sourceInFlight >= c.sourceLimit)
    return { reason: `waiting for a slot of mapping ${c.source} (${c.sourceInFlight} of ${c.sourceLimit} in use)` };
  if (!c.ready) return { reason: 'waiting for an earlier run of its session' };
  return { reason: 'waiting for its turn' };
}
