import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { FromSchema } from 'json-schema-to-ts';
import { github } from './github.js';
import { gitlab } from './gitlab.js';
import { hmac } from './hmac.js';
import type { Handshake, SchemeMasks, SignatureScheme, SignOptions, Verification } from './scheme.js';
import { slack } from './slack.js';
import { standardWebhooks } from './standard-webhooks.js';
import { stripe } from './stripe.js';

/**
 * The signature schemes by name (docs/security.md#provider-signatures). The rest of the code
 * asks here and never names a scheme; this order is that of `verify.scheme`'s enum and of the docs table.
 */
const SCHEMES = [github, gitlab, stripe, slack, standardWebhooks, hmac] as const;

type Registered = (typeof SCHEMES)[number];
type SchemeName = Registered['name'];
/** Every scheme's keys of `verify`, merged (a key two schemes share has the same schema). */
type Merged<S> = (S extends { configSchema: infer P } ? (p: P) => void : never) extends (p: infer All) => void
  ? All
  : never;
type SchemeProperties = Merged<Registered>;

/** The names of the registered schemes, in order. */
const SCHEME_NAMES = SCHEMES.map((scheme: SignatureScheme) => scheme.name) as readonly SchemeName[];

/** A mapping's `verify`: a scheme by name, its secret, and the keys of its scheme. */
export const verifySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['scheme', 'secret'],
  properties: {
    scheme: { type: 'string', enum: SCHEME_NAMES },
    secret: { type: 'string', minLength: 1 },
    ...(Object.assign({}, ...SCHEMES.map((scheme: SignatureScheme) => scheme.configSchema)) as SchemeProperties),
  },
} as const;

/** A mapping's `verify` settings. */
export type VerifyConfig = FromSchema<typeof verifySchema>;

/** The registered schemes, in order (the contract suite runs over each). */
export const signatureSchemes: readonly SignatureScheme<VerifyConfig>[] = SCHEMES;
const byName = Object.fromEntries(signatureSchemes.map((scheme) => [scheme.name, scheme])) as Readonly<
  Record<SchemeName, SignatureScheme<VerifyConfig>>
>;

/** The scheme of a mapping's `verify` (validated against `verifySchema`, so always registered). */
const schemeOf = (config: VerifyConfig) => byName[config.scheme];

/** Verifies a webhook's signature over the raw bytes (docs/security.md#provider-signatures). Never reveals the expected value. */
export function verifySignature(
  config: VerifyConfig,
  headers: IncomingHttpHeaders,
  raw: Buffer,
  nowSeconds = Math.floor(Date.now() / 1000),
): Verification {
  return schemeOf(config).verify(config, headers, raw, nowSeconds);
}

/**
 * The headers a sender would put on `raw` for a mapping's `verify` (`hookd send`, fixtures): the
 * inverse of `verifySignature`. The time and id default to now and a new UUID.
 */
export function signDelivery(
  config: VerifyConfig,
  raw: Buffer,
  options: Partial<SignOptions> = {},
): Record<string, string> {
  const { nowSeconds = Math.floor(Date.now() / 1000), id = randomUUID(), recorded } = options;
  return schemeOf(config).sign(config, raw, { nowSeconds, id, ...(recorded ? { recorded } : {}) });
}

/** The credential headers a mapping's check reads: a stored record marks them verified when it passes. */
export function signatureHeadersOf(config: VerifyConfig): readonly string[] {
  return schemeOf(config).signatureHeaders(config);
}

/** The answer a request verified by `config` gets before any mapping, when it is its sender's handshake. */
export function handshakeOf(config: VerifyConfig, payload: unknown): Handshake | undefined {
  return schemeOf(config).handshake?.(payload);
}

/** What is wrong with a `verify`'s secret for its scheme (docs/security.md#provider-signatures), if anything. */
export function secretProblemOf(scheme: string, secret: string): string | undefined {
  return (byName as Readonly<Record<string, SignatureScheme<VerifyConfig>>>)[scheme]?.secretProblem?.(secret);
}

/** What every scheme masks, whatever a mapping's settings (docs/security.md#what-is-masked). */
export const SCHEME_MASKS: Required<SchemeMasks> = {
  headers: signatureSchemes.flatMap((scheme) => scheme.masks.headers),
  prefixes: signatureSchemes.flatMap((scheme) => scheme.masks.prefixes ?? []),
  secrets: signatureSchemes.flatMap((scheme) => scheme.masks.secrets ?? []),
};
