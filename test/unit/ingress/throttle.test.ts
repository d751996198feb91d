import { describe, expect, it } from 'vitest';
import { createAuthThrottle } from '../../../src/ingress/throttle.js';

function clock(start = 1_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

describe('createAuthThrottle', () => {
  it('locks a client for 60 s after 20 failures within 60 s', () => {
    const c = clock();
    const throttle = createAuthThrottle({ now: c.now });
    for (let i = 0; i < 19; i++) throttle.fail('1.2.3.4');
    expect(throttle.lockedForSeconds('1.2.3.4')).toBe(0);
    throttle.fail('1.2.3.4');
    expect(throttle.lockedForSeconds('1.2.3.4')).toBe(60);
    c.advance(59_001);
    expect(throttle.lockedForSeconds('1.2.3.4')).toBe(1);
    c.advance(1_000);
    expect(throttle.lockedForSeconds('1.2.3.4')).toBe(0);
  });

  it('does not lock when the failures are spread over more than the window', () => {
    const c = clock();
    const throttle = createAuthThrottle({ now: c.now });
    for (let i = 0; i < 40; i++) {
      throttle.fail('1.2.3.4');
      c.advance(4_000);
    }
    expect(throttle.lockedForSeconds('1.2.3.4')).toBe(0);
  });

  it('does not extend a lock for failures during it, and counts afresh once it ends', () => {
    const c = clock();
    const throttle = createAuthThrottle({ now: c.now });
    for (let i = 0; i < 20; i++) throttle.fail('1.2.3.4');
    c.advance(30_000);
    for (let i = 0; i < 10; i++) throttle.fail('1.2.3.4');
    expect(throttle.lockedForSeconds('1.2.3.4')).toBe(30);
    c.advance(30_000);
    expect(throttle.lockedForSeconds('1.2.3.4')).toBe(0);
    for (let i = 0; i < 19; i++) throttle.fail('1.2.3.4');
    expect(throttle.lockedForSeconds('1.2.3.4')).toBe(0);
    throttle.fail('1.2.3.4');
    expect(throttle.lockedForSeconds('1.2.3.4')).toBe(60);
  });

  it('keeps clients apart', () => {
    const throttle = createAuthThrottle({ now: clock().now });
    for (let i = 0; i < 20; i++) throttle.fail('a');
    for (let i = 0; i < 19; i++) throttle.fail('b');
    expect(throttle.lockedForSeconds('a')).toBeGreaterThan(0);
    expect(throttle.lockedForSeconds('b')).toBe(0);
  });

  it('holds at most maxEntries clients, dropping the stalest', () => {
    const throttle = createAuthThrottle({ maxEntries: 100, now: clock().now });
    for (let i = 0; i < 10_000; i++) throttle.fail(`10.0.${i >> 8}.${i & 255}`);
    expect(throttle.size).toBe(100);
  });
});
