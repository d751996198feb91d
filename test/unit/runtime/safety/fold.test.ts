import { describe, expect, it } from 'vitest';
import { foldForMatching, foldText } from '../../../../src/runtime/safety/fold.js';

describe('foldForMatching', () => {
  it('returns plain ASCII as it is', () => {
    const folded = foldForMatching('hello <world>');
    expect(folded.text).toBe('hello <world>');
    expect([folded.startOf(6), folded.endOf(6)]).toEqual([6, 7]);
  });

  it.each([
    ['zero-width space', 'a\u200bb', 'ab'],
    ['soft hyphen', 'a\u00adb', 'ab'],
    ['word joiner', 'a\u2060b', 'ab'],
    ['variation selector', 'a\ufe0fb', 'ab'],
    ['tag characters', 'a\u{e0041}\u{e0042}b', 'ab'],
    ['combining marks', 'e\u0301x\u0308', 'ex'],
    ['accented letters', 'Éxtérnal', 'External'],
    ['full-width letters', 'ＥＸＴ', 'EXT'],
    ['mathematical bold', '𝐄𝐗𝐓', 'EXT'],
    ['long s', 'ſ', 's'],
    ['Cyrillic look-alikes', 'ЕХТ', 'EXT'],
    ['Greek look-alikes', 'ΕΧΤ', 'EXT'],
    ['small capitals', 'ᴇxᴛ', 'ExT'],
    ['dashes', 'a\u2013b\u2014c\u2212d', 'a-b-c-d'],
    ['angle-bracket look-alikes', '«‹〈x〉›»', '<<<x>>>'],
  ])('folds %s', (_name, input, expected) => expect(foldText(input)).toBe(expected));

  it('maps every folded unit back to the span of the original it came from', () => {
    const text = 'a\u200b𝐄b';
    const folded = foldForMatching(text);
    expect(folded.text).toBe('aEb');
    expect([folded.startOf(1), folded.endOf(1)]).toEqual([2, 4]);
    expect(text.slice(folded.startOf(2), folded.endOf(2))).toBe('b');
  });
});
