import { describe, expect, it } from 'vitest';
import { chunksOf } from '../../../src/mail/index.js';

describe('chunksOf', () => {
  it('cuts batches by size', () => {
    expect(chunksOf([1, 2, 3, 4, 5], undefined, 2)).toEqual([[1, 2], [3, 4], [5]]);
  });
  it('re-cuts a batch left pending by a crash exactly as before, whatever arrived since', () => {
    expect(chunksOf([1, 2, 3, 4, 5], { firstUid: 1, lastUid: 3 }, 2)).toEqual([
      [1, 2, 3],
      [4, 5],
    ]);
    expect(chunksOf([4, 5], { firstUid: 1, lastUid: 3 }, 2)).toEqual([[4, 5]]);
  });
});
