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

/** A word for the shell, as is: single-quoted, each `'` closed, escaped and reopened. */
export function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
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
