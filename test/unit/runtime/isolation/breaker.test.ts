import { describe, expect, it } from 'vitest';
import { createBreaker } from '../../../../src/runtime/isolation/breaker.js';

const T0 = 1_800_000_000_000;

/** Fails `n` tries in a row at `at`, none of them a probe. */
function failTimes(breaker: ReturnType<typeof createBreaker>, n: number, at: number): void {
  for (let i = 0; i < n; i++) breaker.end('failed', breaker.begin(at), at, 'MODEL_UNREACHABLE: connect ECONNREFUSED');
}

describe('a circuit breaker', () => {
  it('stays closed through four failed tries and opens for 30 s at the fifth', () => {
    const changes: string[] = [];
    const breaker = createBreaker('model', 'dead/x', (b, now) => changes.push(b.state(now)));
    failTimes(breaker, 4, T0);
    expect(breaker.state(T0)).toBe('closed');
    expect(breaker.admits(T0)).toBe(true);
    failTimes(breaker, 1, T0 + 10);
    expect(breaker.state(T0 + 10)).toBe('open');
    expect(breaker.openUntil).toBe(T0 + 10 + 30_000);
    expect(breaker.admits(T0 + 10 + 29_999)).toBe(false);
    expect(changes).toEqual(['open']);
    expect(breaker.snapshot(T0 + 10)).toMatchObject({
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
    failTimes(breaker, 5, T0);
    const later = T0 + 30_000;
    expect(breaker.state(later)).toBe('half-open');
    expect(breaker.admits(later)).toBe(true);
    expect(breaker.begin(later)).toBe(true);
    // The probe is under way: nothing else goes.
    expect(breaker.admits(later)).toBe(false);
    breaker.end('ok', true, later + 5);
    expect(breaker.state(later + 5)).toBe('closed');
    expect(breaker.admits(later + 5)).toBe(true);
    expect(breaker.snapshot(later + 5).failures).toBe(0);
    expect(changes).toEqual(['open', 'closed']);
  });

  it('doubles its open time with every failed probe, up to 10 minutes', () => {
    const breaker = createBreaker('model', 'dead/x');
    failTimes(breaker, 5, T0);
    let now = T0;
    const openFor: number[] = [];
    for (let i = 0; i < 7; i++) {
      now = breaker.openUntil as number;
      expect(breaker.begin(now)).toBe(true);
      breaker.end('failed', true, now, 'MODEL_REFUSED (HTTP 503)');
      openFor.push((breaker.openUntil as number) - now);
    }
    expect(openFor).toEqual([60_000, 120_000, 240_000, 480_000, 600_000, 600_000, 600_000]);
    // Closed by a success, it starts from 30 s again.
    now = breaker.openUntil as number;
    breaker.end('ok', breaker.begin(now), now);
    failTimes(breaker, 5, now);
    expect((breaker.openUntil as number) - now).toBe(30_000);
  });

  it('counts failures in a row only: an answer between them starts the count again', () => {
    const breaker = createBreaker('model', 'flaky/x');
    failTimes(breaker, 4, T0);
    breaker.end('refused', false, T0, undefined);
    failTimes(breaker, 4, T0);
    expect(breaker.state(T0)).toBe('closed');
    failTimes(breaker, 1, T0);
    expect(breaker.state(T0)).toBe('open');
  });

  it('learns nothing from a probe that was cut off: the next one probes', () => {
    const breaker = createBreaker('model', 'dead/x');
    failTimes(breaker, 5, T0);
    const later = T0 + 30_000;
    expect(breaker.begin(later)).toBe(true);
    breaker.end('cut', true, later);
    expect(breaker.state(later)).toBe('half-open');
    expect(breaker.admits(later)).toBe(true);
  });
});
