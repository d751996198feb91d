import { describe, expect, it } from 'vitest';
import { hookdError } from '../../../src/errors.js';
import { errorOf, wireError } from '../../../src/transforms/wire.js';

/** Errors as they cross from the transform process (docs/transforms.md#isolation): as JSON, both ways. */
const across = (err: unknown) => errorOf(JSON.parse(JSON.stringify(wireError(err))));

describe('an error from the transform process', () => {
  it('keeps its code, values and headers: a 503 TRANSFORM_BUSY still asks the sender to wait (Retry-After)', () => {
    const busy = hookdError(
      'TRANSFORM_BUSY',
      { mapping: 'github', running: 2, limit: 'its maxInFlight' },
      { headers: { 'retry-after': '5' } },
    );
    const made = across(busy);
    expect(made.code).toBe('TRANSFORM_BUSY');
    expect(made.statusCode).toBe(503);
    expect(made.headers).toEqual({ 'retry-after': '5' });
    expect(made.message).toBe(busy.message);
  });

  it('without a code, tells the sender that the process failed, not what it said (that goes to the log)', () => {
    const made = across(new Error('ENOENT: /home/hookd/.secret/path'));
    expect(made.code).toBe('TRANSFORM_FAILED');
    expect(made.message).not.toContain('/home/hookd');
    expect(made.message).toMatch(/the transform process failed/);
  });
});
