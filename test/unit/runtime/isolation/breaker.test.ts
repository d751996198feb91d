import { describe, expect, it } from 'vitest';
import type { Stamp } from '../../../../src/clock.js';
import { createBreaker } from '../../../../src/runtime/isolation/breaker.js';

const T0 = 1_800_000_000_000;

/** A moment at which both clocks read `ms` (they agree until a test sets the wall clock apart). */
const at = (ms: number, wall = ms): Stamp => ({ monotonic: ms, wall });

/** Fails `n` tries in a row at `now`, none of them a probe. */
function failTimes(breaker: ReturnType<typeof createBreaker>, n: number, now: Stamp): void {
  for (let i = 0; i < n; i++) breaker.end('failed', breaker.begin(now), now, 'MODEL_UNREACHABLE: connect ECONNREFUSED');
}

/** When an open breaker lets its probe go, as its snapshot at `now` says. */
const until = (breaker: ReturnType<typeof createBreaker>, now: Stamp) => breaker.snapshot(now).openUntil as number;

describe('a circuit breaker', () => {
  it('stays closed through four failed tries and opens for 30 s at the fifth', () => {
    const changes: string[] = [];
    const breaker = createBreaker('model', 'dead/x', (b, now) => changes.push(b.state(now)));
    failTimes(breaker, 4, at(T0));
    expect(breaker.state(at(T0))).toBe('closed');
    expect(breaker.admits(at(T0))).toBe(true);
    failTimes(breaker, 1, at(T0 + 10));
    expect(breaker.state(at(T0 + 10))).toBe('open');
    expect(until(breaker, at(T0 + 10))).toBe(T0 + 10 + 30_000);
    expect(breaker.openFor(at(T0 + 20))).toBe(29_990);
    expect(breaker.admits(at(T0 + 10 + 29_999))).toBe(false);
    expect(changes).toEqual(['open']);
    expect(breaker.snapshot(at(T0 + 10))).toMatchObject({
      target: 'dead/x',
      kind: 'model',
      state: 'open',
      failures: 5,
      lastError: 'MODEL_UNREACHABLE: connect ECONNREFUSED',
    });
  });

  it('lets exactly one probe through once its time is up, and closes when the probe goes through', () => {
    const changes: string[] = [];
    const breaker = createBreaker('channel', 'chatnet', (b, now) => changes.push(b.state(now)));
    failTimes(breaker, 5, at(T0));
    const later = at(T0 + 30_000);
    expect(breaker.state(later)).toBe('half-open');
    expect(breaker.admits(later)).toBe(true);
    expect(breaker.begin(later)).toBe(true);
    // The probe is under way: nothing else goes.
    expect(breaker.admits(later)).toBe(false);
    breaker.end('ok', true, at(T0 + 30_005));
    expect(breaker.state(at(T0 + 30_005))).toBe('closed');
    expect(breaker.admits(at(T0 + 30_005))).toBe(true);
    expect(breaker.openFor(at(T0 + 30_005))).toBeUndefined();
    expect(breaker.snapshot(at(T0 + 30_005)).failures).toBe(0);
    expect(changes).toEqual(['open', 'closed']);
  });

  it('doubles its open time with every failed probe, up to 10 minutes', () => {
    const breaker = createBreaker('model', 'dead/x');
    failTimes(breaker, 5, at(T0));
    let now = T0;
    const openFor: number[] = [];
    for (let i = 0; i < 7; i++) {
      now = until(breaker, at(now));
      expect(breaker.begin(at(now))).toBe(true);
      breaker.end('failed', true, at(now), 'MODEL_REFUSED (HTTP 503)');
      openFor.push(until(breaker, at(now)) - now);
    }
    expect(openFor).toEqual([60_000, 120_000, 240_000, 480_000, 600_000, 600_000, 600_000]);
    // Closed by a success, it starts from 30 s again.
    now = until(breaker, at(now));
    breaker.end('ok', breaker.begin(at(now)), at(now));
    failTimes(breaker, 5, at(now));
    expect(until(breaker, at(now)) - now).toBe(30_000);
  });

  it('counts failures in a row only: an answer between them starts the count again', () => {
    const breaker = createBreaker('model', 'flaky/x');
    failTimes(breaker, 4, at(T0));
    breaker.end('refused', false, at(T0), undefined);
    failTimes(breaker, 4, at(T0));
    expect(breaker.state(at(T0))).toBe('closed');
    failTimes(breaker, 1, at(T0));
    expect(breaker.state(at(T0))).toBe('open');
  });

  it('learns nothing from a probe that was cut off: the next one probes', () => {
    const breaker = createBreaker('model', 'dead/x');
    failTimes(breaker, 5, at(T0));
    const later = at(T0 + 30_000);
    expect(breaker.begin(later)).toBe(true);
    breaker.end('cut', true, later);
    expect(breaker.state(later)).toBe('half-open');
    expect(breaker.admits(later)).toBe(true);
  });

  it('is held open no longer by the system’s clock set back, and no shorter by a suspend the wall clock saw', () => {
    const breaker = createBreaker('model', 'dead/x');
    failTimes(breaker, 5, at(T0));
    // The wall clock stepped back an hour 10 s after it opened: 20 s are left, not an hour and 20 s.
    expect(breaker.openFor(at(T0 + 10_000, T0 + 10_000 - 3_600_000))).toBe(20_000);
    expect(breaker.state(at(T0 + 30_000, T0 + 30_000 - 3_600_000))).toBe('half-open');
    expect(until(breaker, at(T0 + 10_000, T0 - 3_590_000))).toBe(T0 - 3_590_000 + 20_000);
    // The machine slept a minute (the monotonic clock did not count it): its time is up.
    expect(breaker.state(at(T0 + 1_000, T0 + 61_000))).toBe('half-open');
  });
});
