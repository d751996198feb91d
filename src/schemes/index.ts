/**
 * The signature schemes (docs/security.md#provider-signatures): one module each, registered by
 * name; the config schema, the request's way in, `hookd send` and the masking ask here.
 */

export {
  signatureHeadersOf,
  signatureSchemes,
  signDelivery,
  type VerifyConfig,
  verifySignature,
} from './registry.js';
export type { SignatureScheme } from './scheme.js';
