import { fail, headerOf, held, MISMATCH, hmac as mac, safeEqual } from './checks.js';
import type { ConfigOf, SignatureScheme } from './scheme.js';

const DEFAULT_HEADER = 'x-signature';
const configSchema = {
  header: { type: 'string', minLength: 1 },
  algorithm: { type: 'string', enum: ['sha1', 'sha256', 'sha512'] },
  encoding: { type: 'string', enum: ['hex', 'base64'] },
  prefix: { type: 'string' },
} as const;
type HmacConfig = ConfigOf<typeof configSchema>;

const headerName = (config: HmacConfig) => (config.header ?? DEFAULT_HEADER).toLowerCase();
const signatureOf = (config: HmacConfig, raw: Buffer) =>
  `${config.prefix ?? ''}${mac(config.algorithm ?? 'sha256', config.secret, raw).digest(config.encoding ?? 'hex')}`;

/**
 * A plain HMAC of the body: `header` (default `x-signature`) = `prefix` + HMAC(`algorithm`,
 * default sha256) in `encoding` hex or base64. No timestamp, no delivery id.
 */
export const hmac = {
  name: 'hmac',
  configSchema,
  headers: [DEFAULT_HEADER],
  // Its header is the mapping's own: masked through `signatureHeaders` of each mapping's settings.
  masks: { headers: [] },
  verify(config, headers, raw) {
    const name = headerName(config);
    const given = headerOf(headers, name);
    if (!given) return fail(`missing ${name}`);
    return safeEqual(given, signatureOf(config, raw)) ? held(undefined) : fail(MISMATCH);
  },
  sign: (config, raw) => ({ [headerName(config)]: signatureOf(config, raw) }),
  signatureHeaders: (config) => [headerName(config)],
} as const satisfies SignatureScheme<HmacConfig>;
