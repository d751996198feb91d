import type { FastifyRequest } from 'fastify';
import {
  type CredentialTest,
  flattenHeaders,
  isCredentialHeader,
  type MaskedHeaders,
  maskHeaders,
  type RawHeaders,
} from '../headers.js';

/**
 * A hook request as templates, transforms and stored failures see it: never the credentials
 * (no token or signature header, no cookie, no `?token=`; docs/security.md#what-is-masked).
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
  isCredential: CredentialTest = isCredentialHeader,
): RequestWithoutCredentials {
  return {
    headers: flattenHeaders(request.headers, isCredential),
    query: queryWithoutToken(request.query),
    url: urlWithoutToken(request.url),
  };
}

/**
 * A query parameter that holds the hook token, or was meant to: `token`, in any case, with or
 * without brackets (`token[]`, `TOKEN`). Only `token` itself is read as the token; the others are
 * taken out all the same, so that a sender's mistake never lands its secret in a stored URL.
 */
const isTokenParam = (name: string) => /^token(\[[^\]]*\])*$/i.test(name);

/** A parsed query string without the parameters `isTokenParam` names. */
export function queryWithoutToken(query: unknown): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  for (const [name, value] of Object.entries((query ?? {}) as Record<string, unknown>))
    if (!isTokenParam(name)) kept[name] = value;
  return kept;
}

/** Which credentials of a request held: the header the hook token came in, the signatures' headers. */
export interface CredentialProof {
  /** `authorization` or `x-service-token`, when the hook token in it was right. */
  tokenHeader?: string;
  /** The credential headers of the signatures that held. */
  signatureHeaders?: ReadonlySet<string>;
}

/** Headers as a stored record keeps them: credentials `[masked]`, each marked verified when its check passed. */
export function storedHeaders(
  headers: RawHeaders,
  isCredential: CredentialTest,
  proof: CredentialProof,
): MaskedHeaders {
  const { tokenHeader, signatureHeaders } = proof;
  return maskHeaders(headers, isCredential, (name) => name === tokenHeader || signatureHeaders?.has(name) === true);
}

/** The path and query string without the parameters `isTokenParam` names. */
export function urlWithoutToken(url: string): string {
  if (!url.includes('?')) return url;
  const [path, query] = url.split('?', 2) as [string, string | undefined];
  if (query === undefined) return path;
  const params = new URLSearchParams(query);
  for (const name of new Set(params.keys())) if (isTokenParam(name)) params.delete(name);
  const rest = params.toString();
  return rest ? `${path}?${rest}` : path;
}
