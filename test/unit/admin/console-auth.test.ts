import type { FastifyRequest } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import {
  checkCsrf,
  cookieValue,
  createConsoleAuth,
  SECURE_SESSION_COOKIE,
  SESSION_COOKIE,
  sessionCookie,
} from '../../../src/admin/console-auth.js';
import { isHookdError } from '../../../src/errors.js';
import { createStore, type Store, sqliteBackend } from '../../../src/store/sqlite/index.js';

const stores: Store[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
});

const GATEWAY_TOKEN = 'gateway-token-0123456789';

function setup(gatewayToken = GATEWAY_TOKEN) {
  const store = createStore({ path: ':memory:', synchronous: 'normal' });
  stores.push(store);
  let at = Date.parse('2026-11-25T08:00:00Z');
  const auth = createConsoleAuth(sqliteBackend(store, () => at).consoleSessions, gatewayToken);
  const withCookie = (token: string) => ({
    headers: { cookie: `theme=dark; ${SESSION_COOKIE}=${token}; x=1` },
    protocol: 'http' as const,
  });
  return {
    store,
    auth,
    withCookie,
    advance(ms: number) {
      at += ms;
    },
  };
}

function request(headers: Record<string, string>, protocol = 'http', host = 'gw.example:8787'): FastifyRequest {
  return { headers, protocol, host } as unknown as FastifyRequest;
}

function refusal(fn: () => void): string | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    if (isHookdError(err)) return `${err.statusCode} ${err.code}`;
    throw err;
  }
}

describe('console sessions', async () => {
  it('finds the session a cookie names, and stores only a hash of the cookie', async () => {
    const { store, auth, withCookie } = setup();
    const { token, csrf, maxAgeSeconds } = await auth.signIn();
    expect(maxAgeSeconds).toBe(12 * 3600);
    expect((await auth.sessionOf(withCookie(token)))?.csrf).toBe(csrf);
    expect(await auth.sessionOf(withCookie(`${token}x`))).toBeUndefined();
    expect(await auth.sessionOf({ headers: {}, protocol: 'http' as const })).toBeUndefined();
    expect(await auth.sessionOf(withCookie('a'.repeat(500)))).toBeUndefined();
    const hash = (await auth.sessionOf(withCookie(token)))?.tokenHash ?? '';
    expect(hash).not.toBe(token);
    expect(store.consoleSessions.find(token, Date.now())).toBeUndefined();
  });

  it('expires a session 12 hours after sign-in, and sign-out revokes it at once', async () => {
    const { auth, withCookie, advance } = setup();
    const first = await auth.signIn();
    const second = await auth.signIn();
    advance(12 * 3_600_000 - 1);
    expect(await auth.sessionOf(withCookie(first.token))).toBeDefined();
    const session = await auth.sessionOf(withCookie(second.token));
    if (!session) throw new Error('no session');
    await auth.signOut(session);
    expect(await auth.sessionOf(withCookie(second.token))).toBeUndefined();
    advance(1);
    expect(await auth.sessionOf(withCookie(first.token))).toBeUndefined();
  });

  it('keeps at most 50 sessions, dropping the oldest', async () => {
    const { auth, withCookie, advance } = setup();
    const tokens: string[] = [];
    for (let i = 0; i < 60; i++) {
      tokens.push((await auth.signIn()).token);
      advance(1000);
    }
    const live = (
      await Promise.all(tokens.map(async (t) => ((await auth.sessionOf(withCookie(t))) ? t : undefined)))
    ).filter(Boolean);
    expect(live).toEqual(tokens.slice(10));
  });

  it('ends every session when the gateway token changes', async () => {
    const { store, auth, withCookie } = setup();
    const { token } = await auth.signIn();
    expect(await auth.sessionOf(withCookie(token))).toBeDefined();
    const rotated = createConsoleAuth(sqliteBackend(store).consoleSessions, 'a-new-gateway-token-0123456789');
    expect(await rotated.sessionOf(withCookie(token))).toBeUndefined();
  });

  it('tells the session’s listeners at sign-out, and only them', async () => {
    const { auth, withCookie } = setup();
    const mine = await auth.signIn();
    const other = await auth.signIn();
    const session = await auth.sessionOf(withCookie(mine.token));
    const otherSession = await auth.sessionOf(withCookie(other.token));
    if (!session || !otherSession) throw new Error('no session');
    const ended: string[] = [];
    auth.onSignOut(session, () => ended.push('mine'));
    const stop = auth.onSignOut(otherSession, () => ended.push('other'));
    stop();
    await auth.signOut(otherSession);
    await auth.signOut(session);
    expect(ended).toEqual(['mine']);
  });

  it('reads the __Host- cookie over HTTPS, and no cookie whose name appears twice', async () => {
    const { auth } = setup();
    const { token } = await auth.signIn();
    const https = (cookie: string) => ({ headers: { cookie }, protocol: 'https' as const });
    expect(await auth.sessionOf(https(`${SECURE_SESSION_COOKIE}=${token}`))).toBeDefined();
    expect(await auth.sessionOf(https(`${SESSION_COOKIE}=${token}`))).toBeUndefined();
    expect(
      await auth.sessionOf(https(`${SECURE_SESSION_COOKIE}=x; ${SECURE_SESSION_COOKIE}=${token}`)),
    ).toBeUndefined();
  });

  it('sets the cookie __Host- and Secure over HTTPS, plain over HTTP', () => {
    expect(sessionCookie('https', 'abc', 43200)).toBe(
      '__Host-hookd_session=abc; Path=/; HttpOnly; SameSite=Strict; Max-Age=43200; Secure',
    );
    expect(sessionCookie('http', 'abc', 43200)).toBe(
      'hookd_session=abc; Path=/; HttpOnly; SameSite=Strict; Max-Age=43200',
    );
    expect(sessionCookie('https', '', 0)).toBe(
      '__Host-hookd_session=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0; Secure',
    );
  });

  it('reads one cookie out of a Cookie header', () => {
    expect(cookieValue('a=1; hookd_session=abc; b=2', 'hookd_session')).toBe('abc');
    expect(cookieValue('xhookd_session=abc', 'hookd_session')).toBeUndefined();
    expect(cookieValue(undefined, 'hookd_session')).toBeUndefined();
    expect(cookieValue('hookd_session', 'hookd_session')).toBeUndefined();
    expect(cookieValue('hookd_session=a; hookd_session=b', 'hookd_session')).toBeUndefined();
  });
});

describe('checkCsrf', () => {
  const session = { tokenHash: 'h', csrf: 'the-csrf-token-0123456789' };

  it('takes the session’s token from this origin, or with no origin said', () => {
    expect(refusal(() => checkCsrf(request({}), session, session.csrf))).toBeUndefined();
    const sameOrigin = request({ origin: 'http://gw.example:8787', 'sec-fetch-site': 'same-origin' });
    expect(refusal(() => checkCsrf(sameOrigin, session, session.csrf))).toBeUndefined();
  });

  it('refuses a missing or wrong token, another origin, and a cross-site fetch with 403 CSRF_REFUSED', () => {
    expect(refusal(() => checkCsrf(request({}), session, undefined))).toBe('403 CSRF_REFUSED');
    expect(refusal(() => checkCsrf(request({}), session, 'the-csrf-token-0123456788'))).toBe('403 CSRF_REFUSED');
    expect(refusal(() => checkCsrf(request({}), session, ''))).toBe('403 CSRF_REFUSED');
    const other = request({ origin: 'http://evil.example' });
    expect(refusal(() => checkCsrf(other, session, session.csrf))).toBe('403 CSRF_REFUSED');
    // `Origin: null` (a sandboxed frame, a privacy redirect) is not this origin either.
    expect(refusal(() => checkCsrf(request({ origin: 'null' }), session, session.csrf))).toBe('403 CSRF_REFUSED');
    const https = request({ origin: 'https://gw.example:8787' });
    expect(refusal(() => checkCsrf(https, session, session.csrf))).toBe('403 CSRF_REFUSED');
    for (const site of ['cross-site', 'same-site']) {
      const fetched = request({ 'sec-fetch-site': site });
      expect(refusal(() => checkCsrf(fetched, session, session.csrf))).toBe('403 CSRF_REFUSED');
    }
  });
});
