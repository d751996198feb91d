import { createHash, randomBytes } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { hookdError } from '../errors.js';
import type { ConsoleSessionRepository } from '../store/index.js';
import { safeEqual } from './auth.js';

export const SESSION_COOKIE = 'hookd_session';
/** A session lasts 12 hours from sign-in, whatever is done in it. */
const SESSION_TTL_MS = 12 * 3_600_000;
/** Sessions kept at once; the oldest go first. */
const MAX_SESSIONS = 50;

/** A console session as a request presents it. */
export interface ConsoleSession {
  readonly tokenHash: string;
  readonly csrf: string;
}

const hash = (token: string) => createHash('sha256').update(token).digest('base64url');

/** The value of one cookie in a `Cookie` header. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}

/**
 * Console sign-in sessions (DESIGN §13): an HttpOnly, SameSite=Strict cookie holding a random
 * token; the store keeps only its hash, with the session's CSRF token and expiry. Sign-out
 * deletes the row, so a copied cookie is dead from then on.
 */
export function createConsoleAuth(sessions: ConsoleSessionRepository, now: () => number = Date.now) {
  return {
    signIn(): { token: string; csrf: string; maxAgeSeconds: number } {
      const token = randomBytes(32).toString('base64url');
      const csrf = randomBytes(32).toString('base64url');
      const at = now();
      sessions.prune(at, MAX_SESSIONS - 1);
      sessions.insert({ tokenHash: hash(token), csrf, createdAt: at, expiresAt: at + SESSION_TTL_MS });
      return { token, csrf, maxAgeSeconds: SESSION_TTL_MS / 1000 };
    },
    /** The live session the request's cookie names, if any. */
    sessionOf(request: Pick<FastifyRequest, 'headers'>): ConsoleSession | undefined {
      const token = cookieValue(request.headers.cookie, SESSION_COOKIE);
      if (!token || token.length > 100) return undefined;
      const found = sessions.find(hash(token), now());
      return found && { tokenHash: found.tokenHash, csrf: found.csrf };
    },
    signOut(session: ConsoleSession): void {
      sessions.delete(session.tokenHash);
    },
  };
}

export type ConsoleAuth = ReturnType<typeof createConsoleAuth>;

/**
 * A state change made with a session cookie must carry the session's CSRF token (the
 * `x-csrf-token` header, or a form's `csrf` field) and, when the browser says where it comes
 * from, come from this origin. Throws 403 `CSRF_REFUSED` otherwise.
 */
export function checkCsrf(request: FastifyRequest, session: ConsoleSession, presented: string | undefined): void {
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none')
    throw hookdError('CSRF_REFUSED', { why: 'cross-site' });
  const origin = request.headers.origin;
  if (origin !== undefined && origin !== `${request.protocol}://${request.host}`)
    throw hookdError('CSRF_REFUSED', { why: 'cross-site' });
  if (!presented || !safeEqual(presented, session.csrf)) throw hookdError('CSRF_REFUSED', { why: 'token' });
}
