export { adminRoutes } from './admin.js';
export { classifyContentType, parseBody } from './body.js';
export { installErrorHandlers, toHookdError } from './errors.js';
export { healthRoutes } from './health.js';
export { hookRoutes } from './hooks.js';
export { signDelivery } from './sign.js';
export { verifySignature } from './signatures.js';
