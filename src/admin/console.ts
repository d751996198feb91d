import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isHookdError } from '../errors.js';
import type { AuthThrottle } from '../ingress/index.js';
import { createTokenMatcher } from '../ingress/index.js';
import type { Logger } from '../log.js';
import { type ConsoleAuth, checkCsrf, checkSameOrigin, sessionCookie } from './console-auth.js';

/** The console's own source folder (console/ at the package root; dist/cli sits as deep as src/admin). */
const SOURCE = fileURLToPath(new URL('../../console/', import.meta.url));
const FORM_LIMIT_BYTES = 4096;

export interface ConsoleRoutesOptions {
  readonly gatewayToken: string;
  readonly auth: ConsoleAuth;
  readonly throttle: AuthThrottle;
  readonly log: Logger;
}

/** Every console page: nothing from elsewhere, no framing, no referrer to other sites. */
const PAGE_HEADERS = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  // Not no-referrer: under it Chromium sends `Origin: null` with the page's own form posts.
  'referrer-policy': 'same-origin',
  'cache-control': 'no-store',
};

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);

function page(title: string, body: string, head = ''): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<link rel="stylesheet" href="/ui/app.css">
<link rel="icon" href="/ui/favicon.svg" type="image/svg+xml">
${head}
</head>
<body>
${body}
</body>
</html>
`;
}

function signInPage(problem?: string): string {
  return page(
    'hookd · sign in',
    `<main class="signin">
<h1>hookd</h1>
<form method="post" action="/ui/login">
<label for="token">Gateway token</label>
<input id="token" name="token" type="password" autocomplete="current-password" required autofocus>
${problem ? `<p class="problem" role="alert">${escapeHtml(problem)}</p>` : ''}
<button type="submit">Sign in</button>
</form>
<p class="hint">The token is <code>gateway.auth.token</code>, or the one in <code>data/gateway-token</code>.</p>
</main>`,
  );
}

/** The console's shell: the app script reads its CSRF token from the page, never from a URL. */
function shellPage(csrf: string): string {
  return page(
    'hookd',
    `<div id="app"><p class="loading">Loading…</p></div>
<form id="signout" method="post" action="/ui/logout" hidden><input type="hidden" name="csrf" value="${escapeHtml(csrf)}"></form>
<script type="module" src="/ui/app.js"></script>`,
    `<meta name="csrf-token" content="${escapeHtml(csrf)}">`,
  );
}

/**
 * The operator console at `/ui/` (docs/console.md): a sign-in form, the session cookie, and the app
 * bundled by esbuild from console/ on first use (kept in memory; nothing is fetched from
 * elsewhere, so it works offline). The app talks to the admin API with the cookie.
 */
export async function consoleRoutes(app: FastifyInstance, options: ConsoleRoutesOptions): Promise<void> {
  const { auth, throttle } = options;
  const matches = createTokenMatcher(options.gatewayToken);
  let bundle: Promise<string> | undefined;
  const script = () => {
    bundle ??= bundleApp().catch((err: unknown) => {
      bundle = undefined;
      throw err;
    });
    return bundle;
  };

  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: FORM_LIMIT_BYTES },
    (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(body as string))),
  );

  const html = (reply: FastifyReply, status: number, text: string) =>
    reply.code(status).headers(PAGE_HEADERS).type('text/html; charset=utf-8').send(text);

  app.get('/ui', async (_request, reply) => reply.redirect('/ui/', 301));
  app.get('/ui/', async (request, reply) => {
    const session = await auth.sessionOf(request);
    return html(reply, 200, session ? shellPage(session.csrf) : signInPage());
  });

  // Small bodies only, whatever their type (the form's parser has the same cap).
  const small = { bodyLimit: FORM_LIMIT_BYTES };
  app.post('/ui/login', small, async (request, reply) => {
    const form = (request.body ?? {}) as Record<string, string | undefined>;
    try {
      checkSameOrigin(request);
    } catch {
      return html(reply, 403, signInPage('Sign in from the console’s own page.'));
    }
    // A locked address is refused, the right token too (or a 303 would tell a guesser it found
    // it); only a wrong one counts (docs/security.md#throttling).
    const token = typeof form.token === 'string' ? form.token : '';
    if (throttle.lockedForSeconds(request.ip) > 0)
      return html(reply, 429, signInPage('Too many failed attempts; wait a minute and try again.'));
    if (!matches(token)) {
      if (token !== '') throttle.fail(request.ip);
      options.log.warn({ reqId: request.id, ip: request.ip }, 'console sign-in refused');
      return html(reply, 401, signInPage('That is not the gateway token.'));
    }
    const session = await auth.signIn();
    reply.header('set-cookie', sessionCookie(request.protocol, session.token, session.maxAgeSeconds));
    return reply.code(303).header('location', '/ui/').send();
  });

  app.post('/ui/logout', small, async (request, reply) => {
    // Another site may not sign the operator out either (it could, were the cookie cleared
    // without a check whenever the browser left it off).
    checkSameOrigin(request);
    const session = await auth.sessionOf(request);
    if (session) {
      checkCsrf(request, session, ((request.body ?? {}) as Record<string, string | undefined>).csrf);
      await auth.signOut(session);
    }
    reply.header('set-cookie', sessionCookie(request.protocol, '', 0));
    return reply.code(303).header('location', '/ui/').send();
  });

  app.get('/ui/app.js', async (_request: FastifyRequest, reply) => {
    try {
      const code = await script();
      return reply.headers(PAGE_HEADERS).type('text/javascript; charset=utf-8').send(code);
    } catch (err) {
      if (isHookdError(err)) throw err;
      options.log.error({ err }, 'the console did not bundle');
      throw err;
    }
  });
  fileRoutes(app);
}

/** The stylesheet and the icons: no session needed, nothing from elsewhere. */
function fileRoutes(app: FastifyInstance): void {
  // Read once, like the script is bundled once.
  const stylesheet = readOnce(`${SOURCE}style.css`);
  app.get('/ui/app.css', async (_request, reply) =>
    reply
      .headers(PAGE_HEADERS)
      .type('text/css; charset=utf-8')
      .send(await stylesheet()),
  );
  // The icon, for the console's tab and for a browser that asks the site's root for one.
  const icon = readOnce(`${SOURCE}favicon.svg`);
  const ico = readOnce(`${SOURCE}favicon.ico`);
  const cached = { 'cache-control': 'public, max-age=86400', 'x-content-type-options': 'nosniff' };
  app.get('/ui/favicon.svg', async (_request, reply) =>
    reply
      .headers(cached)
      .type('image/svg+xml')
      .send(await icon()),
  );
  app.get('/favicon.ico', async (_request, reply) =>
    reply
      .headers(cached)
      .type('image/x-icon')
      .send(await ico()),
  );
}

/** A file of the console's folder, read on first use and kept; read again after a failed read. */
function readOnce(file: string): () => Promise<Buffer> {
  let read: Promise<Buffer> | undefined;
  return () => {
    read ??= readFile(file).catch((err: unknown) => {
      read = undefined;
      throw err;
    });
    return read;
  };
}

/** Bundles console/main.tsx (Preact) into one script. */
async function bundleApp(): Promise<string> {
  // Loaded by the console's first page, not at start.
  const { build } = await import('esbuild');
  const result = await build({
    entryPoints: [`${SOURCE}main.tsx`],
    bundle: true,
    write: false,
    format: 'esm',
    target: 'es2022',
    minify: true,
    jsx: 'automatic',
    jsxImportSource: 'preact',
    legalComments: 'none',
    logLevel: 'silent',
  });
  return result.outputFiles[0]?.text ?? '';
}
