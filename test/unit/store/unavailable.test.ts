import { describe, expect, it } from 'vitest';
import { isHookdError } from '../../../src/errors.js';
import {
  acceptError,
  causeOf,
  commitInDoubt,
  failureFields,
  isCommitInDoubt,
  isStoreUnavailable,
} from '../../../src/store/unavailable.js';

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

describe('a commit in doubt', () => {
  it('is a failure of a commit sent and never answered, not one the server refused or never sent', () => {
    const timedOut = new Error('Query read timeout');
    expect(isCommitInDoubt(commitInDoubt(timedOut))).toBe(true);
    expect(isHookdError(acceptError(timedOut), 'COMMIT_UNCONFIRMED')).toBe(true);
    // The server answered (an SQLSTATE and its severity): nothing was committed.
    const refused = Object.assign(new Error('terminating connection'), { code: '57P01', severity: 'FATAL' });
    expect(isCommitInDoubt(commitInDoubt(refused))).toBe(false);
    expect(isHookdError(acceptError(refused), 'STORE_UNAVAILABLE')).toBe(true);
    // pg never sent it: the connection was broken already.
    const notSent = new Error('Client has encountered a connection error and is not queryable');
    expect(isCommitInDoubt(commitInDoubt(notSent))).toBe(false);
    // Not the store's absence at all: as it is.
    const wrong = systemError('EBADF');
    expect(isCommitInDoubt(commitInDoubt(wrong))).toBe(false);
    expect(acceptError(wrong)).toBe(wrong);
  });
});

describe("a failure's log fields", () => {
  it('are its cause alone for a store out of reach, and the error itself otherwise', () => {
    expect(failureFields(systemError('ECONNREFUSED'))).toEqual({ cause: 'ECONNREFUSED: failed' });
    // `localhost` tried on ::1 and 127.0.0.1: Node's AggregateError, whose own message is empty.
    const both = Object.assign(
      new AggregateError([systemError('ECONNREFUSED'), new Error('connect ECONNREFUSED 127.0.0.1:5432')], ''),
      { code: 'ECONNREFUSED' },
    );
    expect(failureFields(both)).toEqual({ cause: 'ECONNREFUSED: failed' });
    expect(causeOf(Object.assign(new AggregateError([], ''), { code: 'ECONNREFUSED' }))).toBe('ECONNREFUSED');
    const bug = new TypeError('x is undefined');
    expect(failureFields(bug)).toEqual({ err: bug });
  });
});
