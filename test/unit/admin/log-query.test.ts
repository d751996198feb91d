import { describe, expect, it } from 'vitest';
import { limitOf, requestFilter, runFilter } from '../../../src/admin/log-query.js';

/** The list filters of the admin API (docs/runtime.md#request-log-and-replay). */

const NOW = Date.parse('2026-03-01T12:00:00Z');

describe('GET /api/requests filters', () => {
  it('reads eventType, q, until and refused beside the others', () => {
    expect(
      requestFilter(
        { eventType: 'push', q: '  refs/heads/main ', until: '1h', since: '2026-03-01', refused: 'false' },
        NOW,
      ),
    ).toEqual({
      limit: 50,
      eventType: 'push',
      search: 'refs/heads/main',
      until: NOW - 3_600_000,
      since: Date.parse('2026-03-01'),
      refused: false,
    });
    expect(requestFilter({ refused: 'true', until: '2026-02-01T00:00:00Z' }, NOW)).toEqual({
      limit: 50,
      refused: true,
      until: Date.parse('2026-02-01T00:00:00Z'),
    });
  });

  it('leaves out an empty q, eventType or mapping', () => {
    expect(requestFilter({ q: '   ', eventType: '', mapping: ' ' }, NOW)).toEqual({ limit: 50 });
  });

  it('reads mapping: the id of the mapping that took the request', () => {
    expect(requestFilter({ mapping: 'github' }, NOW)).toEqual({ limit: 50, mapping: 'github' });
  });

  it.each([
    [{ until: 'tomorrow' }, /until: expected an ISO time or a duration/],
    [{ refused: 'yes' }, /refused: expected true or false/],
    [{ q: 'x'.repeat(201) }, /q: expected at most 200 characters/],
    [{ eventType: 'x'.repeat(201) }, /eventType: expected at most 200 characters/],
  ])('refuses %o with 400 INVALID_FIELD naming it', (query, message) => {
    expect(() => requestFilter(query, NOW)).toThrow(
      expect.objectContaining({ code: 'INVALID_FIELD', statusCode: 400 }),
    );
    expect(() => requestFilter(query, NOW)).toThrow(message);
  });

  it('refuses a parameter given twice (400, never a 500 from a list)', () => {
    const twice = { q: ['a', 'b'] } as unknown as Record<string, string>;
    expect(() => requestFilter(twice, NOW)).toThrow(/q: expected one value/);
    expect(() => runFilter({ mapping: ['a', 'b'] } as unknown as Record<string, string>)).toThrow(
      /mapping: expected one value/,
    );
  });
});

describe('GET /api/runs filters', () => {
  it('reads mapping beside status', () => {
    expect(runFilter({ mapping: 'preset:github', status: 'failed', limit: '10' })).toEqual({
      limit: 10,
      mapping: 'preset:github',
      status: 'failed',
    });
    expect(runFilter({ mapping: '' })).toEqual({ limit: 50 });
    expect(() => runFilter({ mapping: 'x'.repeat(201) })).toThrow(/mapping: expected at most 200 characters/);
  });
});

describe('limit', () => {
  it('is 1 to 500 written in digits, and nothing else Number() would read', () => {
    expect(limitOf({})).toBe(50);
    expect(limitOf({ limit: '1' })).toBe(1);
    expect(limitOf({ limit: '500' })).toBe(500);
    for (const limit of ['0', '501', '0x10', '1e2', ' 5', '5 ', '05', '1.0', '-1', '', 'Infinity']) {
      expect(() => limitOf({ limit }), limit).toThrow(expect.objectContaining({ code: 'INVALID_FIELD' }));
    }
  });
});
