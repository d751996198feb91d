import { describe, expect, it } from 'vitest';
import { isHookdError } from '../../../src/errors.js';
import { acceptError, isStoreUnavailable } from '../../../src/store/unavailable.js';

const systemError = (code: string) => Object.assign(new Error(`${code}: failed`), { code });

describe('a store that cannot take a write now', () => {
  it.each(['ENOSPC', 'EDQUOT', 'EIO', 'EROFS'])(
    'counts a disk error %s (the body log beside SQLite) as unavailable',
    (code) => {
      expect(isStoreUnavailable(systemError(code))).toBe(true);
      const answered = acceptError(systemError(code));
      expect(isHookdError(answered, 'STORE_UNAVAILABLE')).toBe(true);
      expect((answered as { headers?: Record<string, string> }).headers).toEqual({ 'retry-after': '5' });
    },
  );

  it('leaves an error of the write itself as it is', () => {
    const wrong = systemError('EBADF');
    expect(isStoreUnavailable(wrong)).toBe(false);
    expect(acceptError(wrong)).toBe(wrong);
  });
});
