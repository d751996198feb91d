import { describe, expect, it } from 'vitest';
import { mergeTransformResult } from '../../../src/mapping/index.js';

const draft = { kind: 'agent' as const, message: 'templated', name: 'GitHub' };

describe('mergeTransformResult (docs/mappings.md)', () => {
  it('null skips', () => expect(mergeTransformResult(draft, null)).toEqual({ drafts: [], fanOut: false }));
  it('undefined keeps the templates', () =>
    expect(mergeTransformResult(draft, undefined)).toEqual({ drafts: [draft], fanOut: false }));
  it('an object overrides field by field', () => {
    expect(mergeTransformResult(draft, { message: 'from code', to: '42' }).drafts).toEqual([
      { kind: 'agent', message: 'from code', name: 'GitHub', to: '42' },
    ]);
  });
  it('kind switches agent → wake', () => {
    expect(mergeTransformResult(draft, { kind: 'wake', text: 'ping' }).drafts[0]).toMatchObject({
      kind: 'wake',
      text: 'ping',
    });
  });
  it('an array fans out', () => {
    const merged = mergeTransformResult(draft, [{ message: 'a' }, { kind: 'wake', text: 'b' }]);
    expect(merged.fanOut).toBe(true);
    expect(merged.drafts.map((d) => d.kind)).toEqual(['agent', 'wake']);
  });
  it.each([
    ['a string', 'hello'],
    ['a number', 42],
    ['an unknown field', { mesage: 'typo' }],
    ['a bad kind', { kind: 'email' }],
    ['a nested array', [[{ message: 'x' }]]],
  ])('refuses %s as TRANSFORM_FAILED', (_name, result) => {
    expect(() => mergeTransformResult(draft, result)).toThrow(expect.objectContaining({ code: 'TRANSFORM_FAILED' }));
  });
  it('refuses more than 100 actions', () => {
    const many = Array.from({ length: 101 }, () => ({ message: 'x' }));
    expect(() => mergeTransformResult(draft, many)).toThrow(expect.objectContaining({ code: 'TOO_MANY_ACTIONS' }));
  });
});
