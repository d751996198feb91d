import { SCHEME_MASKS } from './schemes/index.js';

/** Request headers as Node gives them: lower-cased names, repeated ones as arrays. */
export type RawHeaders = Readonly<Record<string, string | readonly string[] | undefined>>;

/**
 * The headers that carry a secret or a proof of one (docs/security.md#what-is-masked): the
 * tokens, the cookie, and the headers every signature scheme masks. Templates, transforms and
 * logs never see their values; stored records keep their names, `[masked]`.
 */
export const CREDENTIAL_HEADERS: ReadonlySet<string> = new Set([
  'authorization',
  'x-service-token',
  'cookie',
  'proxy-authorization',
  ...SCHEME_MASKS.headers,
]);

/** What a stored record shows in place of a credential's value. */
export const MASKED = '[masked]';

/** Whether a lower-cased header name carries a credential. */
export type CredentialTest = (name: string) => boolean;

/**
 * The credential test of a configuration: the fixed names, the schemes' masked prefixes, and
 * the headers its mappings' own signatures come in (`extra`, any case).
 */
export function credentialTest(extra: Iterable<string> = []): CredentialTest {
  const names = new Set(CREDENTIAL_HEADERS);
  for (const name of extra) names.add(name.toLowerCase());
  const { prefixes } = SCHEME_MASKS;
  return (name) => names.has(name) || prefixes.some((prefix) => name.startsWith(prefix));
}

/** The fixed credential headers alone (no mapping's own HMAC header). */
export const isCredentialHeader: CredentialTest = credentialTest();

/**
 * Headers as one string each (repeated values joined with `, `), names lower-cased, without
 * the names in `omit`. The one header flattening of templates, transforms and stored requests.
 */
export function flattenHeaders(
  headers: RawHeaders,
  omit: ReadonlySet<string> | CredentialTest = new Set(),
): Record<string, string> {
  const omitted = typeof omit === 'function' ? omit : (name: string) => omit.has(name);
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(headers)) {
    const name = key.toLowerCase();
    if (value === undefined || omitted(name)) continue;
    out[name] = typeof value === 'string' ? value : value.join(', ');
  }
  return out;
}

/** Whether a credential header's check (the token's, a signature's) passed for this request. */
export interface CredentialMark {
  readonly verified: boolean;
}

/** Headers as a stored record keeps them: credentials by name only, and whether each held. */
export interface MaskedHeaders {
  /** Every header, a credential's value replaced by `[masked]`. */
  readonly headers: Record<string, string>;
  /** Each credential header present, by name. */
  readonly credentials: Readonly<Record<string, CredentialMark>>;
}

const NO_CREDENTIALS: Readonly<Record<string, CredentialMark>> = Object.freeze({});

/**
 * Flattens headers for a stored record: a credential header keeps its name with the value
 * `[masked]`, and is marked verified when `isVerified` says the check it feeds passed.
 */
export function maskHeaders(
  headers: RawHeaders,
  isCredential: CredentialTest,
  isVerified: (name: string) => boolean = () => false,
): MaskedHeaders {
  let credentials: Record<string, CredentialMark> | undefined;
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const name = key.toLowerCase();
    if (isCredential(name)) {
      out[name] = MASKED;
      credentials ??= {};
      credentials[name] = { verified: isVerified(name) };
    } else out[name] = typeof value === 'string' ? value : value.join(', ');
  }
  return { headers: out, credentials: credentials ?? NO_CREDENTIALS };
}
