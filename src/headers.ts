/** Request headers as Node gives them: lower-cased names, repeated ones as arrays. */
export type RawHeaders = Readonly<Record<string, string | readonly string[] | undefined>>;

/** Credential headers: templates, transforms, stored failures and logs never see them. */
export const CREDENTIAL_HEADERS: ReadonlySet<string> = new Set([
  'authorization',
  'x-service-token',
  'cookie',
  'proxy-authorization',
]);

/**
 * Headers as one string each (repeated values joined with `, `), names lower-cased, without
 * the names in `omit`. The one header flattening of templates, transforms and stored requests.
 */
export function flattenHeaders(headers: RawHeaders, omit: ReadonlySet<string> = new Set()): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(headers)) {
    const name = key.toLowerCase();
    if (value === undefined || omit.has(name)) continue;
    out[name] = typeof value === 'string' ? value : value.join(', ');
  }
  return out;
}
