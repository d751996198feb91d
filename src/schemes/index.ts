/**
 * The signature schemes (docs/security.md#provider-signatures): one module each, registered by
 * name; the config schema, the request's way in, `hookd send` and the masking ask here.
 */
export { safeEqual } from './checks.js';
export {
  handshakeOf,
  SCHEME_MASKS,
  secretProblemOf,
  signatureHeadersOf,
  signatureSchemes,
  signDelivery,
  type VerifyConfig,
  verifySchema,
  verifySignature,
} from './registry.js';
export type { Handshake, SignatureScheme } from './scheme.js';
export { standardWebhooks } from './standard-webhooks.js';
