import type { Logger } from '../log.js';

/**
 * What the gateway remembers of its transform process's ends (docs/transforms.md#isolation): which
 * mappings were blamed for them, which are refused for a while, and how long the next restart waits.
 */

/** A mapping blamed for this many ends… */
export const STRIKES = 3;
/** …within this window… */
const STRIKE_WINDOW_MS = 10 * 60_000;
/** …has its calls refused for this long (each one kept for replay), so that a payload sent again and again cannot keep every transform down. */
export const QUARANTINE_MS = 60_000;
/** Restarts that follow an end within a minute wait longer each time, up to this. */
const MAX_RESTART_DELAY_MS = 5000;

export class ProcessEnds {
  constructor(private readonly log: Logger) {}

  private readonly strikes = new Map<string, number[]>();
  private readonly quarantined = new Map<string, number>();
  /** When the process ended, over the last minute (restarts wait longer as they come closer). */
  private readonly ends: number[] = [];

  /** Why the calls of mapping `key` are refused, if they are now. */
  refusal(key: string, now: number): string | undefined {
    const until = this.quarantined.get(key);
    if (until === undefined) return undefined;
    if (until > now)
      return `the transform process ended ${STRIKES} times while this mapping's calls ran; its calls are refused until ${new Date(until).toISOString()}`;
    this.quarantined.delete(key);
    return undefined;
  }

  /** Blames mapping `key` for an end: at its third strike in the window, its calls are refused for a while. */
  strike(key: string, now: number): void {
    const times = (this.strikes.get(key) ?? []).filter((at) => at > now - STRIKE_WINDOW_MS);
    times.push(now);
    this.strikes.set(key, times);
    if (times.length < STRIKES) return;
    this.strikes.delete(key);
    this.quarantined.set(key, now + QUARANTINE_MS);
    this.log.error(
      { mapping: key, strikes: STRIKES, forMs: QUARANTINE_MS },
      "the transform process ended again and again while this mapping's calls ran; its calls are refused for a while",
    );
  }

  /** Counts an end; answers how long the restart that follows it waits (0 for the first in a minute). */
  restartDelay(now: number): number {
    while (this.ends.length > 0 && (this.ends[0] as number) < now - 60_000) this.ends.shift();
    this.ends.push(now);
    return this.ends.length < 2 ? 0 : Math.min(MAX_RESTART_DELAY_MS, 100 * 2 ** (this.ends.length - 2));
  }
}
