/**
 * The deepest `[`/`{` nesting of a JSON text (strings skipped), or a bound of it when that is at
 * most `limit`; past `limit` it stops reading. `JSON.parse` of a text nested millions deep holds
 * the thread for seconds (8 MiB of `[`: 2.4 s): a text is measured before it is parsed.
 */
function nestingDepth(text: string, limit: number): number {
  // A text with at most limit opening brackets in all cannot nest deeper: counting them
  // with indexOf is native, where the scan below is a JavaScript loop over every character.
  let brackets = 0;
  for (const open of ['{', '[']) {
    for (let i = text.indexOf(open); i !== -1 && brackets <= limit; i = text.indexOf(open, i + 1)) brackets++;
  }
  if (brackets <= limit) return brackets;
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92)
        i++; // backslash: skip the escaped character
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 91 || c === 123) {
      if (++depth > max) max = depth;
      if (max > limit) return max;
    } else if (c === 93 || c === 125) depth--;
  }
  return max;
}

/** How deep a destination's JSON answer may nest to be parsed: answers are a few levels deep. */
export const MAX_ANSWER_DEPTH = 64;

/** True when `text` nests deeper than `limit`: it is not to be parsed. */
export const nestedDeeperThan = (text: string, limit: number): boolean => nestingDepth(text, limit) > limit;
