/** setTimeout's ceiling (about 24.8 days); AbortSignal.timeout throws past it, and on fractions. */
const MAX_TIMER_MS = 2_147_483_647;

/** An AbortSignal that fires after `seconds` (fractions rounded up to a millisecond, clamped to the timer range). */
export function timeoutSignal(seconds: number): AbortSignal {
  return AbortSignal.timeout(Math.min(MAX_TIMER_MS, Math.max(1, Math.ceil(seconds * 1000))));
}
