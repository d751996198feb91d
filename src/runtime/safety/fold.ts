/**
 * Folding of look-alike text for marker and phrase detection (docs/security.md#untrusted-content): what a model reads
 * as `EXTERNAL_UNTRUSTED_CONTENT` must match as that, however it is spelled in code points.
 */

// Angle-bracket look-alikes folded to < and > (doubled and tripled ones too: `<+` takes any number).
const OPENERS = '‹〈⟨＜﹤˂ᐸ❮❰⦉«≺⧼〈❬《⟪≪⋘⫷';
const CLOSERS = '›〉⟩＞﹥˃ᐳ❯❱⦊»≻⧽〉❭》⟫≫⋙⫸';

// Cherokee capitals that look like Latin ones (their small letters fold alike, below).
const CHEROKEE = ['ᎪᏴᏟᎠᎬᏀᎻᎫᏦᏞᎷᏃᏢᎡᏚᎢᏙᏔᎳ', 'ABCDEGHJKLMZPRSTVWW'] as const;

/** Letters that look like Latin ones: Cyrillic, Greek, Armenian, Lisu, Cherokee, small capitals and a few more. */
const CONFUSABLE_LETTERS: Readonly<Record<string, string>> = {
  ...pairs('АВСЕНІЈКМОРЅТХУЁЇ', 'ABCEHIJKMOPSTXYEI'),
  ...pairs('авсеніјкмортѕхуёїԁһԛԝ', 'abcehijkmoptsxyeidhqw'),
  ...pairs('ΑΒΕΖΗΙΚΜΝΟΡΤΥΧϹ', 'ABEZHIKMNOPTYXC'),
  ...pairs('αβεικνορτυχϲ', 'abeiknoptuxc'),
  ...pairs('ՍսՕօ', 'UuOo'),
  ...pairs('ꓐꓑꓓꓔꓖꓗꓙꓚꓜꓝꓟꓠꓡꓢꓣꓦꓧꓪꓫꓬꓮꓰꓲꓳꓴ', 'BPDTGKJCZFMNLSRVHWXYAEIOU'),
  ...pairs(CHEROKEE[0], CHEROKEE[1]),
  ...pairs(CHEROKEE[0].toLowerCase(), CHEROKEE[1].toLowerCase()),
  ...pairs('ᴀʙᴄᴅᴇɢʜɪᴊᴋʟᴍɴᴏᴘʀꜱᴛᴜᴠᴡʏᴢ', 'ABCDEGHIJKLMNOPRSTUVWYZ'),
  // Letters with a stroke, bar or hook, which NFD does not split (Ø is not O + a mark).
  ...pairs('ØøŁłŦŧƬȻȼɌɍꞨꞩꞒꞓĐđĦħƗɨɆɇƵƶǤǥȺⱥɃƀƇƈƊƑƒƓƘƙƤƥƮƲȤȥƝɲⱮɱ', 'OoLlTtTCcRrSsCcDdHhIiEeZzGgAaBbCcDFfGKkPpTVZzNnMm'),
  // Coptic, read as the Greek it comes from.
  ...pairs('ⲀⲂⲄⲆⲈⲌⲎⲒⲔⲖⲘⲚⲞⲢⲤⲦⲨⲬ', 'ABGDEZHIKLMNOPCTYX'),
  ...pairs('ⲁⲃⲅⲇⲉⲍⲏⲓⲕⲗⲙⲛⲟⲣⲥⲧⲩⲭ', 'abgdezhiklmnopctyx'),
  // Canadian syllabics of "fancy text" generators.
  ...pairs('ᗩᗷᑕᗪᗴᖴᕼᒍᒪᑎᑭᖇᔕᑌᐯᗯ᙭ᘔ', 'ABCDEFHJLNPRSUVWXZ'),
};

/**
 * Letters NFKC leaves as they are, each in a run of 26 from A: negative circled (🅐), negative
 * squared (🅰) and regional indicators (🇦), which a model reads as the letter.
 */
const LETTER_RUNS = [0x1f150, 0x1f170, 0x1f1e6];

function runLetter(cp: number): string | undefined {
  const start = LETTER_RUNS.find((first) => cp >= first && cp < first + 26);
  return start === undefined ? undefined : String.fromCharCode(0x41 + cp - start);
}

function pairs(from: string, to: string): Record<string, string> {
  const out: Record<string, string> = {};
  [...from].forEach((ch, i) => {
    out[ch] = to[i] as string;
  });
  return out;
}

/**
 * What a model reads past: every control character (C0, DEL, C1: U+0000–001F, U+007F–009F) but
 * the white space ones (tab, line feed, vertical tab, form feed, carriage return: the marker's
 * `\s` takes those), format characters (zero-width space and joiners, soft hyphen, bidirectional
 * controls, tags), lone surrogates, private-use and unassigned code points, combining marks
 * (diacritics, the grapheme joiner, variation selectors) and the other default-ignorable ones
 * (Hangul fillers).
 */
const IGNORABLE = /(?![\t\n\v\f\r])[\p{C}\p{M}\p{Default_Ignorable_Code_Point}]/u;
/**
 * A terminal's colour or style (SGR: `ESC [ 1 ; 31 m`), read past whole, as a model reads it. Only
 * those: another sequence's last byte may be a letter of the word (`ESC [ T`), which it keeps.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: ESC starts what it matches
const STYLE_SEQUENCE = /\x1b\[[0-9;:]{0,32}m/y;
// Dashes, and the minus signs that look like them.
const DASH = /[\p{Pd}\u2212\u02d7\u2796\ufe63\uff0d]/u;
const PLAIN = /^[\t\n\r\x20-\x7e]*$/;
/** Whether a code point folds to itself without a look: printable ASCII, tab, line feed, carriage return. */
const isPlain = (cp: number) => (cp >= 0x20 && cp < 0x7f) || cp === 0x09 || cp === 0x0a || cp === 0x0d;

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
  const letter = runLetter(ch.codePointAt(0) as number);
  if (letter) return letter;
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

/** Code points folded before, up to FOLDED_KEPT of them: text repeats its letters (1.3 µs a CJK character before). */
const foldedKept = new Map<number, string>();
const FOLDED_KEPT = 4096;

function foldedOf(cp: number): string {
  let folded = foldedKept.get(cp);
  if (folded === undefined) {
    folded = foldChar(String.fromCodePoint(cp));
    if (foldedKept.size < FOLDED_KEPT) foldedKept.set(cp, folded);
  }
  return folded;
}

/**
 * Folds `text` for matching: NFKC, then control characters (but white space) and terminal
 * colour sequences, invisible and format characters, variation selectors, tags and combining
 * marks dropped, dashes made `-`, angle-bracket and letter look-alikes made ASCII. Plain ASCII
 * (tab, line feed and carriage return included) comes back as it is.
 */
export function foldForMatching(text: string): Folded {
  // Plain text folds to itself: no map is built (a 256 KB message would cost two arrays of 256 K).
  if (PLAIN.test(text)) return { text, startOf: (i) => i, endOf: (i) => i + 1 };
  let out = '';
  const from: number[] = [];
  const to: number[] = [];
  for (let i = 0; i < text.length; ) {
    const cp = text.codePointAt(i) as number;
    if (cp === 0x1b) {
      STYLE_SEQUENCE.lastIndex = i;
      if (STYLE_SEQUENCE.test(text)) {
        i = STYLE_SEQUENCE.lastIndex;
        continue;
      }
    }
    const width = cp > 0xffff ? 2 : 1;
    const folded = isPlain(cp) ? (text[i] as string) : foldedOf(cp);
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
