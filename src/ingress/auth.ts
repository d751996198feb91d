import { hash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

export { safeEqual } from '../schemes/index.js';

/** Where a presented token came from (docs/security.md#tokens, in order of precedence). */
export type TokenSource = 'bearer' | 'header' | 'query';

export interface PresentedToken {
  readonly token: string;
  readonly source: TokenSource;
}

const BEARER = /^bearer[ \t]+(\S+)[ \t]*$/i;

/** Finds the token: `Authorization: Bearer`, else `x-service-token`, else `?token=`. */
export function findToken(headers: IncomingHttpHeaders, query: unknown): PresentedToken | undefined {
  const authorization = headers.authorization;
  if (typeof authorization === 'string') {
    const match = BEARER.exec(authorization);
    if (match) return { token: match[1] as string, source: 'bearer' };
  }
  const header = headers['x-service-token'];
  if (typeof header === 'string' && header !== '') return { token: header, source: 'header' };
  const fromQuery = (query as Record<string, unknown> | undefined)?.token;
  const token = Array.isArray(fromQuery) ? fromQuery[0] : fromQuery;
  if (typeof token === 'string' && token !== '') return { token, source: 'query' };
  return undefined;
}

const digest = (value: string) => hash('sha256', value, 'buffer');

/** A matcher for one secret, its digest computed once: the token check on every hook request. */
export function createTokenMatcher(expected: string): (presented: string) => boolean {
  const expectedDigest = digest(expected);
  return (presented) => timingSafeEqual(digest(presented), expectedDigest);
}
