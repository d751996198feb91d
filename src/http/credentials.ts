import type { FastifyRequest } from 'fastify';
import { CREDENTIAL_HEADERS, flattenHeaders } from '../headers.js';

/**
 * A hook request as templates, transforms and stored failures see it: never the credentials
 * (no token header, no cookie, no `?token=`).
 */
export interface RequestWithoutCredentials {
  readonly headers: Record<string, string>;
  readonly query: Record<string, unknown>;
  /** The path and query string, `token` taken out. */
  readonly url: string;
}

/** Strips the credentials from a request's headers, query and URL. */
export function withoutCredentials(
  request: Pick<FastifyRequest, 'headers' | 'query' | 'url'>,
): RequestWithoutCredentials {
  const { token: _token, ...query } = (request.query ?? {}) as Record<string, unknown>;
  return { headers: flattenHeaders(request.headers, CREDENTIAL_HEADERS), query, url: urlWithoutToken(request.url) };
}

function urlWithoutToken(url: string): string {
  const [path, query] = url.split('?', 2) as [string, string | undefined];
  if (query === undefined) return path;
  const params = new URLSearchParams(query);
  params.delete('token');
  const rest = params.toString();
  return rest ? `${path}?${rest}` : path;
}
