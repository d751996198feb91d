/**
 * The request's way in, in order: the gate (auth, throttle, signatures), the body, the
 * idempotency key, the actions handed to the sink, the answer and its record in the log.
 */
export { createTokenMatcher, findToken, safeEqual } from './auth.js';
export { classifyContentType, type ParsedBody, parseBody } from './body.js';
export { limitConnectionsPerClient } from './client-connections.js';
export { closeConnectionsOnClose, closingError } from './closing.js';
export { installErrorHandlers, toHookdError } from './errors.js';
export { createHookActions, type HookActions, type HookActionsTrail } from './hook-actions.js';
export { hookRoutes } from './hooks.js';
export {
  createInFlightKeys,
  hashBody,
  type InFlightKeys,
  requestKeyOf,
  type SignedDelivery,
  storedKeyOf,
} from './idempotency.js';
export { answerMalformed, answerOutsideFastify } from './raw-answers.js';
export { type CredentialFingerprints, createCredentialFingerprints } from './receipt.js';
export {
  createRequestRecorder,
  labelsOf,
  type RequestFacts,
  type RequestRecorder,
  reasonOf,
  requestLogSettings,
} from './request-log.js';
export { type Answer, answerFor } from './responses.js';
export { handshakeFor } from './signatures.js';
export { type AuthThrottle, createAuthThrottle } from './throttle.js';
