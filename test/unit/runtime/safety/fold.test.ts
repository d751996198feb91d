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
    ['doubled angle-bracket look-alikes', '≪x》', '<x>'],
    ['C0, DEL and C1 controls', 'a\u0000b\u0001c\u007fd\u0085e\u009f', 'abcde'],
    ['white space controls, kept', 'a\u00e9\tb\nc\r\u000bd\u000c', 'ae\tb\nc\r\u000bd\u000c'],
    ['terminal colour sequences', 'a\u001b[1;31mb\u001b[0mc\u001b[m', 'abc'],
    ['other escapes: the escape only', 'a\u001b[Tb', 'a[Tb'],
    ['lone surrogates, private use, noncharacters', 'a\ud800b\ue000c\uffff', 'abc'],
    ['grapheme joiner and bidirectional controls', 'a\u034fb\u202ec\u2066', 'abc'],
    ['Lisu and Cherokee look-alikes', '\ua4f0\ua4eb\ua4d4 \u13a1\u13da\u13a2', 'EXT RST'],
  ])('folds %s', (_name, input, expected) => expect(foldText(input)).toBe(expected));

  it('maps a unit after a dropped control or colour sequence back to its own span', () => {
    const text = 'a\u0001\u001b[31mb';
    const folded = foldForMatching(text);
    expect(folded.text).toBe('ab');
    expect(text.slice(folded.startOf(1), folded.endOf(1))).toBe('b');
  });

  it('maps every folded unit back to the span of the original it came from', () => {
    const text = 'a\u200b𝐄b';
    const folded = foldForMatching(text);
    expect(folded.text).toBe('aEb');
    expect([folded.startOf(1), folded.endOf(1)]).toEqual([2, 4]);
    expect(text.slice(folded.startOf(2), folded.endOf(2))).toBe('b');
  });
});
