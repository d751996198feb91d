import { describe, expect, it } from 'vitest';
import { didYouMean, editDistance } from '../../../src/config/suggest.js';

describe('did you mean', () => {
  it('counts insertions, deletions, substitutions and swapped neighbours, ignoring case', () => {
    expect(editDistance('mapings', 'mappings')).toBe(1);
    expect(editDistance('mial', 'mail')).toBe(1);
    expect(editDistance('Token', 'token')).toBe(0);
    expect(editDistance('kitten', 'sitting')).toBe(3);
  });

  it.each([
    ['mapings', ['mappings', 'presets', 'path'], 'mappings'],
    ['inf', ['fatal', 'error', 'warn', 'info', 'debug'], 'info'],
    ['mesageTemplate', ['messageTemplate', 'textTemplate'], 'messageTemplate'],
    ['tokne', ['token', 'path'], 'token'],
  ])('suggests %s → %s', (word, candidates, expected) => {
    expect(didYouMean(word, candidates)).toBe(expected);
  });

  it('suggests nothing for a word far from every candidate, an exact match or a tie', () => {
    expect(didYouMean('bogus', ['mappings', 'presets'])).toBeUndefined();
    expect(didYouMean('path', ['path', 'paths'])).toBeUndefined();
    expect(didYouMean('cat', ['bat', 'hat'])).toBeUndefined();
  });
});
