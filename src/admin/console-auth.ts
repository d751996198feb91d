import { createHmac, randomBytes } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { hookdError } from '../errors.js';
import type { ConsoleSessionStore } from '../store/index.js';

/** Console sessions as the store keeps them, their expiry by the store's clock. */
export type ConsoleSessions = ConsoleSessionStore;

import { safeEqual } from '../ingress/index.js';

/** The cookie's name over plain HTTP (loopback, a private network). */
export const SESSION_COOKIE = 'hookd_session';
/**
 * Over HTTPS: the `__Host-` prefix makes browsers refuse the cookie unless this origin set it
 * (Secure, Path=/, no Domain), so a sibling subdomain cannot plant one in its place.
 */
export const SECURE_SESSION_COOKIE = '__Host-hookd_session';

/** The session cookie's name for a request's protocol. */
export const sessionCookieName = (protocol: string) => (protocol === 'https' ? SECURE_SESSION_COOKIE : SESSION_COOKIE);

/**
 * The `Set-Cookie` value of a session (`maxAgeSeconds` 0 clears it). `protocol` is the one the
 * browser used: fastify's `request.protocol`, which reads `X-Forwarded-Proto` only from a proxy
 * `server.trustProxy` trusts. Over HTTPS it is `__Host-` and `Secure`; over plain HTTP no cookie
 * attribute can keep it from other ports of the host (docs/console.md#signing-in).
 */
export function sessionCookie(protocol: string, value: string, maxAgeSeconds: number): string {
  const attributes = `Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}`;
  return `${sessionCookieName(protocol)}=${value}; ${attributes}${protocol === 'https' ? '; Secure' : ''}`;
}
/** A session lasts 12 hours from sign-in, whatever is done in it. */
const SESSION_TTL_MS = 12 * 3_600_000;
/** Sessions kept at once; the oldest go first. */
const MAX_SESSIONS = 50;

/** A console session as a request presents it. */
export interface ConsoleSession {
  readonly tokenHash: string;
  readonly csrf: string;
}

/** The value of one cookie in a `Cookie` header; none when the name appears twice (a planted copy). */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  let found: string | undefined;
  for (const part of header.split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) {
      if (found !== undefined) return undefined;
      found = part.slice(at + 1).trim();
    }
  }
  return found;
}

/**
 * Console sign-in sessions (docs/console.md): an HttpOnly, SameSite=Strict cookie holding a random
 * token; the store keeps only its HMAC keyed by the gateway token (so that changing the gateway
 * token ends every session), with the session's CSRF token and expiry. Sign-out deletes the row
 * and ends the session's live streams, so a copied cookie is dead from then on.
 */
export function createConsoleAuth(sessions: ConsoleSessions, gatewayToken: string) {
  const hash = (token: string) => createHmac('sha256', gatewayToken).update(token).digest('base64url');
  const ended = new Map<string, Set<() => void>>();
  return {
    async signIn(): Promise<{ token: string; csrf: string; maxAgeSeconds: number }> {
      const token = randomBytes(32).toString('base64url');
      const csrf = randomBytes(32).toString('base64url');
      await sessions.prune(MAX_SESSIONS - 1);
      await sessions.insert({ tokenHash: hash(token), csrf, ttlMs: SESSION_TTL_MS });
      return { token, csrf, maxAgeSeconds: SESSION_TTL_MS / 1000 };
    },
    /** The live session the request's cookie names, if any. */
    async sessionOf(request: Pick<FastifyRequest, 'headers' | 'protocol'>): Promise<ConsoleSession | undefined> {
      const token = cookieValue(request.headers.cookie, sessionCookieName(request.protocol));
      if (!token || token.length > 100) return undefined;
      const found = await sessions.find(hash(token));
      return found && { tokenHash: found.tokenHash, csrf: found.csrf };
    },
    async signOut(session: ConsoleSession): Promise<void> {
      await sessions.delete(session.tokenHash);
      for (const end of ended.get(session.tokenHash) ?? []) end();
      ended.delete(session.tokenHash);
    },
    /** Calls `end` when the session signs out; returns the function that stops listening. */
    onSignOut(session: ConsoleSession, end: () => void): () => void {
      const listeners = ended.get(session.tokenHash) ?? new Set();
      listeners.add(end);
      ended.set(session.tokenHash, listeners);
      return () => {
        listeners.delete(end);
        if (listeners.size === 0) ended.delete(session.tokenHash);
      };
    },
  };
}

export type ConsoleAuth = ReturnType<typeof createConsoleAuth>;

/**
 * Refuses (403 `CSRF_REFUSED`) what a browser says comes from another site: a `Sec-Fetch-Site`
 * other than same-origin or none (a typed URL), or an `Origin` other than this one. Every
 * request made with the session cookie passes here, reads included.
 */
export function checkSameOrigin(request: FastifyRequest): void {
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none')
    throw hookdError('CSRF_REFUSED', { why: 'cross-site' });
  const origin = request.headers.origin;
  if (origin !== undefined && origin !== `${request.protocol}://${request.host}`)
    throw hookdError('CSRF_REFUSED', { why: 'cross-site' });
}

/**
 * A state change made with a session cookie must carry the session's CSRF token (the
 * `x-csrf-token` header, or a form's `csrf` field) and come from this origin. Throws 403
 * `CSRF_REFUSED` otherwise.
 */
export function checkCsrf(request: FastifyRequest, session: ConsoleSession, presented: string | undefined): void {
  checkSameOrigin(request);
  if (!presented || !safeEqual(presented, session.csrf)) throw hookdError('CSRF_REFUSED', { why: 'token' });
}
