/**
 * Folding of look-alike text for marker and phrase detection (docs/security.md#untrusted-content): what a model reads
 * as `EXTERNAL_UNTRUSTED_CONTENT` must match as that, however it is spelled in code points.
 */

// Angle-bracket look-alikes folded to < and >.
const OPENERS = '‹〈⟨＜﹤˂ᐸ❮❰⦉«≺⧼〈';
const CLOSERS = '›〉⟩＞﹥˃ᐳ❯❱⦊»≻⧽〉';

/** Letters that look like Latin ones: Cyrillic, Greek, Armenian, small capitals and a few more. */
const CONFUSABLE_LETTERS: Readonly<Record<string, string>> = {
  ...pairs('АВСЕНІЈКМОРЅТХУЁЇ', 'ABCEHIJKMOPSTXYEI'),
  ...pairs('авсеніјкмортѕхуёїԁһԛԝ', 'abcehijkmoptsxyeidhqw'),
  ...pairs('ΑΒΕΖΗΙΚΜΝΟΡΤΥΧϹ', 'ABEZHIKMNOPTYXC'),
  ...pairs('αβεικνορτυχϲ', 'abeiknoptuxc'),
  ...pairs('ՍսՕօ', 'UuOo'),
  ...pairs('ᴀʙᴄᴅᴇɢʜɪᴊᴋʟᴍɴᴏᴘʀꜱᴛᴜᴠᴡʏᴢ', 'ABCDEGHIJKLMNOPRSTUVWYZ'),
};

function pairs(from: string, to: string): Record<string, string> {
  const out: Record<string, string> = {};
  [...from].forEach((ch, i) => {
    out[ch] = to[i] as string;
  });
  return out;
}

/** Invisible and format characters, combining marks (diacritics, variation selectors) and tags. */
const IGNORABLE = /[\p{Cf}\p{M}\p{Default_Ignorable_Code_Point}]/u;
// Dashes, and the minus signs that look like them.
const DASH = /[\p{Pd}\u2212\u02d7\u2796\ufe63\uff0d]/u;
const PLAIN = /^[\t\n\r\x20-\x7e]*$/;

/** Folded text, and for each of its UTF-16 units the span of the original it came from. */
export interface Folded {
  readonly text: string;
  /** Where folded unit `i` starts in the original. */
  startOf(i: number): number;
  /** Where folded unit `i` ends (exclusive) in the original. */
  endOf(i: number): number;
}

function foldChar(ch: string): string {
  if (IGNORABLE.test(ch)) return '';
  if (OPENERS.includes(ch)) return '<';
  if (CLOSERS.includes(ch)) return '>';
  if (DASH.test(ch)) return '-';
  // NFKC turns full-width, mathematical and enclosed letters (and long s) into plain ones;
  // NFD then splits off accents, which are dropped like any combining mark.
  const plain = ch.normalize('NFKC').normalize('NFD');
  let out = '';
  for (const part of plain) {
    if (IGNORABLE.test(part)) continue;
    out += CONFUSABLE_LETTERS[part] ?? part;
  }
  return out;
}

/**
 * Folds `text` for matching: NFKC, then invisible and format characters, variation
 * selectors, tags and combining marks dropped, dashes made `-`, angle-bracket and letter
 * look-alikes made ASCII. Plain ASCII comes back as it is.
 */
export function foldForMatching(text: string): Folded {
  // Plain text folds to itself: no map is built (a 256 KB message would cost two arrays of 256 K).
  if (PLAIN.test(text)) return { text, startOf: (i) => i, endOf: (i) => i + 1 };
  let out = '';
  const from: number[] = [];
  const to: number[] = [];
  for (let i = 0; i < text.length; ) {
    const cp = text.codePointAt(i) as number;
    const width = cp > 0xffff ? 2 : 1;
    const folded = cp < 0x7f ? (text[i] as string) : foldChar(String.fromCodePoint(cp));
    for (let k = 0; k < folded.length; k++) {
      from.push(i);
      to.push(i + width);
    }
    out += folded;
    i += width;
  }
  return { text: out, startOf: (i) => from[i] as number, endOf: (i) => to[i] as number };
}

/** Folds `text` for matching, without the map back to the original (phrase detection). */
export function foldText(text: string): string {
  return PLAIN.test(text) ? text : foldForMatching(text).text;
}
