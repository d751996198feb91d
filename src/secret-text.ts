/** What a credential is replaced with in a text hookd keeps or shows. */
export const SECRET_MASK = '[REDACTED]';

/**
 * Replaces every credential in a text (an error a destination answered, a library's message),
 * in each form a server or library may quote it: as written, URL-encoded (in either case, with
 * `+` for a space) and JSON-escaped (with `\/` too),
 * longest first (so that one inside another is not left half shown).
 */
export function maskerOf(secrets: readonly (string | undefined)[]): (text: string) => string {
  const forms = new Set<string>();
  for (const secret of secrets) {
    if (!secret) continue;
    const encoded = encodeURIComponent(secret);
    const json = JSON.stringify(secret).slice(1, -1);
    forms.add(secret);
    forms.add(encoded);
    // Percent-encoded in lower case, a form's `+` for a space, PHP's JSON escape of `/`.
    forms.add(encoded.replace(/%[0-9A-F]{2}/g, (hex) => hex.toLowerCase()));
    forms.add(encoded.replace(/%20/g, '+'));
    forms.add(json);
    forms.add(json.replace(/\//g, '\\/'));
  }
  const ordered = [...forms].sort((a, b) => b.length - a.length);
  if (ordered.length === 0) return (text) => text;
  return (text) => ordered.reduce((out, secret) => out.split(secret).join(SECRET_MASK), text);
}

/** The shortest value masked anywhere in a text; a shorter one (3 characters) only as a whole word. */
const MASKED_ANYWHERE = 4;

/**
 * `text` with each of `values` (a payload's redacted values) replaced by `mask`: one of 4
 * characters or more wherever it shows, one of 3 as a word of its own (a CVC, not a part of a
 * line number), longest first; and a text cut short (ending in `…`) loses a tail that begins one.
 */
export function maskValues(text: string, values: readonly string[], mask: string): string {
  const kept = [...new Set(values)].filter((v) => v.length >= 3).sort((a, b) => b.length - a.length);
  let out = text;
  for (const value of kept) {
    if (value.length >= MASKED_ANYWHERE) out = out.split(value).join(mask);
    else out = out.replace(new RegExp(`(?<![\\p{L}\\p{N}])${escaped(value)}(?![\\p{L}\\p{N}])`, 'gu'), mask);
  }
  if (!out.endsWith('…')) return out;
  const body = out.slice(0, -1);
  for (const value of kept)
    for (let k = Math.min(value.length - 1, 256); k >= 3; k--)
      if (body.endsWith(value.slice(0, k))) return `${body.slice(0, -k)}${mask}…`;
  return out;
}

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
