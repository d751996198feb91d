import { describe, expect, it } from 'vitest';
import { createBreakers, MAX_TARGETS } from '../../../../src/runtime/isolation/breakers.js';
import type { Target } from '../../../../src/runtime/isolation/index.js';

/** The destinations a gateway's breakers know by key (docs/runtime.md#circuit-breakers). */
describe('the breakers of a gateway', () => {
  it('forgets the destinations requests named and left, past a bound, keeping those in use or with a breaker', () => {
    const inUse = new Set<string>();
    const breakers = createBreakers(
      () => {},
      (target) => inUse.has(target.id),
    );
    const model = (id: string): Target => ({ kind: 'model', id });
    const waiting = model('live/waiting');
    inUse.add(waiting.id);
    const waitingKey = breakers.keyOf(waiting);
    const withBreaker = model('live/broken');
    breakers.of(withBreaker).admits({ monotonic: 0, wall: 0 });
    const first = model('anyone/0');
    const firstKey = breakers.keyOf(first);
    // A hook token holder naming a new model on every request.
    for (let n = 1; n <= 3 * MAX_TARGETS; n++) breakers.keyOf(model(`anyone/${n}`));
    expect(breakers.targetOf(firstKey)).toBeUndefined();
    expect(breakers.targetOf(waitingKey)).toBe(waiting);
    expect(breakers.targetOf(breakers.keyOf(withBreaker))).toBe(withBreaker);
    // Named again, it is known again.
    expect(breakers.targetOf(breakers.keyOf(first))).toBe(first);
    const known = Array.from({ length: 3 * MAX_TARGETS + 1 }, (_, n) => `model:anyone/${n}`).filter(
      (key) => breakers.targetOf(key) !== undefined,
    );
    expect(known.length).toBeLessThanOrEqual(MAX_TARGETS);
  });
});
