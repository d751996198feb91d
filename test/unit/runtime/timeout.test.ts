import { describe, expect, it } from 'vitest';
import { timeoutSignal } from '../../../src/runtime/timeout.js';

describe('timeoutSignal', () => {
  it('takes fractions and huge values that AbortSignal.timeout refuses', () => {
    expect(() => AbortSignal.timeout(1234.5)).toThrow();
    expect(timeoutSignal(1.2345).aborted).toBe(false);
    expect(timeoutSignal(1e12).aborted).toBe(false);
  });
});
