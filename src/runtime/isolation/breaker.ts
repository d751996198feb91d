import { type Stamp, timeLeftAt } from '../../clock.js';
import type { BreakerState, TargetKind } from '../../views.js';

/** Failed tries in a row that open a breaker (docs/runtime.md#circuit-breakers). */
export const BREAKER_FAILURES = 5;
/** How long a breaker first stays open; each failed probe doubles it. */
export const BREAKER_OPEN_MS = 30_000;
/** The longest a breaker stays open before its next probe. */
export const BREAKER_MAX_OPEN_MS = 600_000;

/**
 * How a try ended, as a breaker counts it: `ok` (it went through), `failed` (429, 5xx, a network
 * error: the destination is unwell), `refused` (a definite answer such as a 400: the destination
 * is up, the request was not for it), `cut` (aborted by its run or a shutdown: nothing learned).
 */
export type TryOutcome = 'ok' | 'failed' | 'refused' | 'cut';

/** A destination's breaker as the runtime reads it. */
export interface BreakerSnapshot {
  readonly target: string;
  readonly kind: TargetKind;
  readonly state: BreakerState;
  /** Failed tries in a row (since the last success or answer). */
  readonly failures: number;
  /** While open: when the next probe may go, on the wall clock of the moment it was read. */
  readonly openUntil?: number;
  /** The last failed try, in hookd's words (a code, a status, a network error). */
  readonly lastError?: string;
}

/**
 * One destination's circuit breaker (docs/runtime.md#circuit-breakers): after 5 failed tries in a
 * row it opens for 30 s, and while open no try goes; then it lets one probe through (half-open):
 * a probe that goes through closes it, one that fails opens it again for twice as long, up to
 * 10 min. A try already under way when it opened ends as it ends: its success closes it. Its open
 * time runs on both of the clock's clocks (`timeLeft`): the system's clock set back does not hold
 * it open for longer.
 */
export interface Breaker {
  readonly target: string;
  readonly kind: TargetKind;
  /** Its state at `now`. */
  state(now: Stamp): BreakerState;
  /** True when a try may start at `now`: closed, or half-open with no probe under way. */
  admits(now: Stamp): boolean;
  /** A try starts at `now`; answers true when it is the probe of a half-open breaker. */
  begin(now: Stamp): boolean;
  /** A try ended; `probe` as `begin` answered; `error` says how a failed one failed. */
  end(outcome: TryOutcome, probe: boolean, now: Stamp, error?: string): void;
  /** How long from `now` an open breaker holds its probe back; undefined when it is closed. */
  openFor(now: Stamp): number | undefined;
  snapshot(now: Stamp): BreakerSnapshot;
  /** True while it has nothing to remember: closed without failures. */
  readonly idle: boolean;
}

/** Creates a closed breaker; `onChange` is told when it opens or closes. */
export function createBreaker(
  kind: TargetKind,
  target: string,
  onChange: (breaker: Breaker, now: Stamp) => void = () => undefined,
): Breaker {
  let failures = 0;
  let openedAt: Stamp | undefined;
  let openMs = BREAKER_OPEN_MS;
  let probing = false;
  let lastError: string | undefined;

  const openFor = (now: Stamp): number | undefined =>
    openedAt === undefined ? undefined : timeLeftAt(openedAt, openMs, now);

  const state = (now: Stamp): BreakerState => {
    const left = openFor(now);
    return left === undefined ? 'closed' : left > 0 ? 'open' : 'half-open';
  };

  function open(now: Stamp, forMs: number): void {
    openMs = forMs;
    openedAt = now;
    onChange(breaker, now);
  }

  function close(now: Stamp): void {
    const wasOpen = openedAt !== undefined;
    failures = 0;
    openedAt = undefined;
    openMs = BREAKER_OPEN_MS;
    if (wasOpen) onChange(breaker, now);
  }

  const breaker: Breaker = {
    target,
    kind,
    state,
    admits: (now) => {
      const s = state(now);
      return s === 'closed' || (s === 'half-open' && !probing);
    },
    begin(now) {
      if (state(now) !== 'half-open') return false;
      probing = true;
      return true;
    },
    end(outcome, probe, now, error) {
      if (probe) probing = false;
      if (outcome === 'cut') return;
      if (outcome !== 'failed') return close(now);
      failures++;
      if (error !== undefined) lastError = error;
      if (probe) return open(now, Math.min(openMs * 2, BREAKER_MAX_OPEN_MS));
      if (openedAt === undefined && failures >= BREAKER_FAILURES) open(now, BREAKER_OPEN_MS);
    },
    openFor,
    snapshot(now) {
      const left = openFor(now);
      return {
        target,
        kind,
        state: state(now),
        failures,
        ...(left === undefined ? {} : { openUntil: now.wall + left }),
        ...(lastError === undefined ? {} : { lastError }),
      };
    },
    get idle() {
      return openedAt === undefined && failures === 0 && !probing;
    },
  };
  return breaker;
}
