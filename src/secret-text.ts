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
