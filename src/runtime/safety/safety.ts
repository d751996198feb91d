import { foldForMatching, foldText } from './fold.js';

// Between the marker's words: any run of white space, punctuation or symbols (`_`, `-`, `.`, `/`, …).
const SEP = '[\\s\\p{P}\\p{S}]{0,8}';
// Between a word's letters: a few of the same (`E N D`, `E_X_T`), so spaced-out letters still spell it.
const GAP = '[\\s\\p{P}\\p{S}]{0,3}';
/**
 * What a model reads as each letter besides itself, after folding: digits and signs written for
 * letters (`3XT3RNAL`, `C0NT3NT`), P for R (Greek and Coptic rho fold to P by their look).
 */
const READ_AS: Readonly<Record<string, string>> = {
  A: '4@',
  E: '3',
  I: '1!|',
  L: '1|',
  O: '0',
  R: 'P',
  S: '5$',
  T: '7+',
};
const letter = (ch: string) => (READ_AS[ch] ? `[${ch}${READ_AS[ch].replace(/[|$+]/g, '\\$&')}]` : ch);
const spelled = (word: string) => [...word].map(letter).join(GAP);
// A run of `<` is read from its first: tried again from each of its characters, a long run was
// quadratic (80,000 took 3.9 s of the event loop).
const MARKER = new RegExp(
  `(?<!<)(?:<+\\s*)?(${spelled('END')}${SEP})?${spelled('EXTERNAL')}${SEP}${spelled('UNTRUSTED')}${SEP}${spelled('CONTENT')}` +
    `(?:\\s+id\\s*=\\s*"[^"\\n]{0,64}")?(?:\\s*>+)?`,
  'giu',
);
// The one word every marker spells in full: text without it is scanned once, not at each position.
const MARKER_WORD = new RegExp(spelled('EXTERNAL'), 'iu');

/**
 * Replaces look-alikes of the wrapper's markers with `[[MARKER_SANITIZED]]` /
 * `[[END_MARKER_SANITIZED]]`: matched on the folded text (see fold.ts), replaced in the original.
 */
export function sanitizeMarkers(text: string): string {
  const folded = foldForMatching(text);
  if (!MARKER_WORD.test(folded.text)) return text;
  let out = '';
  let last = 0;
  for (const match of folded.text.matchAll(MARKER)) {
    if (match[0] === '') continue;
    const start = folded.startOf(match.index);
    const end = folded.endOf(match.index + match[0].length - 1);
    out += text.slice(last, start) + (match[1] ? '[[END_MARKER_SANITIZED]]' : '[[MARKER_SANITIZED]]');
    last = end;
  }
  return out + text.slice(last);
}

const INJECTION_PHRASES: readonly [string, RegExp][] = [
  [
    'ignore-instructions',
    /\b(ignore|disregard|forget|override)\b.{0,40}\b(previous|prior|above|earlier|all|your)\b.{0,20}\b(instructions|rules|prompts?|directions)\b/i,
  ],
  ['new-instructions', /\bnew (system )?instructions\b/i],
  ['role-change', /\byou are (now|no longer)\b|\bact as (an? )?(admin|root|system|developer)\b/i],
  [
    'system-prompt',
    /\b(reveal|print|show|repeat|leak)\b.{0,30}\b(system prompt|instructions|secrets?|passwords?|api keys?|tokens?|credentials)\b/i,
  ],
  ['run-command', /\b(run|execute)\b.{0,20}\b(command|shell|script|rm -rf|curl|wget)\b/i],
  [
    'exfiltrate',
    /\b(send|forward|email|post|upload)\b.{0,40}\b(secrets?|passwords?|api keys?|tokens?|credentials|private)\b/i,
  ],
];

/** Names of known prompt-injection phrases found in `text` (logged, never blocked). */
export function findInjectionPhrases(text: string): string[] {
  const folded = foldText(text);
  return INJECTION_PHRASES.filter(([, pattern]) => pattern.test(folded)).map(([name]) => name);
}
