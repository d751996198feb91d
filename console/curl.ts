/**
 * "Copy as curl" (docs/console.md#copy-as-curl): a logged request as a command that sends it
 * again. No credential is ever in it: the log keeps none, and the command names what to put in
 * their place (`$HOOKD_HOOK_TOKEN` for the hook token, `<signature>` for a signature).
 */

/** What the command is made of: a request as its page shows it. */
export interface CurlSource {
  /** The path and query as received (`/hooks/github?x=1`). */
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly credentials: Readonly<Record<string, unknown>>;
  /** The body as kept; empty when none was. */
  readonly body: string;
  /** `base64`: `body` holds bytes that are not UTF-8 text, in base64. */
  readonly bodyEncoding?: 'base64';
}

/** Headers of the connection, or that curl and the gateway set themselves: a resend does not repeat them. */
const NOT_REPEATED = new Set([
  'host',
  'content-length',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'te',
  'upgrade',
  'expect',
  'accept-encoding',
  'forwarded',
  'x-request-id',
  'cookie',
  'proxy-authorization',
]);

/** The hook token's headers: the variable the docs keep it in, which the shell fills in. */
const TOKEN_HEADERS: Readonly<Record<string, string>> = {
  authorization: 'Bearer $HOOKD_HOOK_TOKEN',
  'x-service-token': '$HOOKD_HOOK_TOKEN',
};

/**
 * What a pasted command must never carry raw: C0 controls (a tab completes, a DEL erases what
 * was typed before it, an ESC can end a bracketed paste early), DEL, C1 controls, and the
 * invisible format and bidirectional characters that make a command read otherwise than it runs.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/;

const encoder = new TextEncoder();

/** One character inside `$'…'`: its UTF-8 bytes as `\xHH` when unsafe, `\\`, `\'` and `!` escaped. */
function ansiC(char: string): string {
  if (char === '\\') return '\\\\';
  if (char === "'") return "\\'";
  // Never a history expansion, whatever the shell's settings.
  if (char === '!' || UNSAFE.test(char))
    return [...encoder.encode(char)].map((byte) => `\\x${byte.toString(16).padStart(2, '0')}`).join('');
  return char;
}

/**
 * A word for the shell, as is: single-quoted, each `'` closed, escaped and reopened; or, when
 * it holds a control or invisible character, ANSI-C quoted (`$'…'`) with each such character
 * written as the `\xHH` escapes of its bytes, so that the copied text holds none of them raw
 * and bash passes on exactly the original bytes (docs/console.md#copy-as-curl).
 */
export function shellQuote(text: string): string {
  if (!UNSAFE.test(text)) return `'${text.replaceAll("'", `'\\''`)}'`;
  return `$'${Array.from(text, ansiC).join('')}'`;
}

/** A credential's stand-in: the shell variable of the hook token, else a placeholder to replace by hand. */
function placeholder(name: string): { value: string; expands: boolean } {
  const token = TOKEN_HEADERS[name];
  if (token) return { value: token, expands: true };
  return { value: name.includes('signature') ? '<signature>' : '<secret>', expands: false };
}

/** The command: `curl -sS -X POST URL -H …` with the kept body, one option per line. */
export function curlOf(request: CurlSource, origin: string): string {
  const lines = [`curl -sS -X POST ${shellQuote(`${origin}${request.url}`)}`];
  for (const [name, value] of Object.entries(request.headers)) {
    if (NOT_REPEATED.has(name) || name.startsWith('x-forwarded-')) continue;
    if (name in request.credentials) {
      const stand = placeholder(name);
      // Our own text only inside double quotes, so that the shell expands the variable.
      lines.push(stand.expands ? `-H "${name}: ${stand.value}"` : `-H ${shellQuote(`${name}: ${stand.value}`)}`);
      continue;
    }
    lines.push(`-H ${shellQuote(`${name}: ${value}`)}`);
  }
  if (request.bodyEncoding === 'base64') {
    // Bytes that are not text: decoded by base64 and given to curl on its standard input.
    lines.push('--data-binary @-');
    return `printf %s ${shellQuote(request.body)} | base64 -d | ${lines.join(' \\\n  ')}`;
  }
  if (request.body !== '') lines.push(`--data-raw ${shellQuote(request.body)}`);
  return lines.join(' \\\n  ');
}
