export { type AdminQueries, type AdminRoutesOptions, adminRoutes } from './admin.js';
export { createTokenMatcher, findToken, safeEqual } from './auth.js';
export { classifyContentType, type ParsedBody, parseBody } from './body.js';
export { installErrorHandlers, toHookdError } from './errors.js';
export { healthRoutes } from './health.js';
export { type HookRoutesOptions, hookRoutes } from './hooks.js';
export { type Answer, answerFor, fanOutResponse, responseFor } from './responses.js';
export { type Verification, type VerifyConfig, verifySignature } from './signatures.js';
export { type AuthThrottle, type AuthThrottleOptions, createAuthThrottle } from './throttle.js';
