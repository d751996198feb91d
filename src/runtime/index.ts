export type { ActivityFeed } from './activity.js';
export { isAckOnly } from './delivery.js';
export { createJobOwner } from './job-owner.js';
export type { ChatChannel, CompletionRequest, ModelProvider, ModelRouter } from './ports.js';
export type { AdminQueries } from './queries.js';
export { createRuntime, type Runtime } from './runtime.js';
export { findInjectionPhrases, sanitizeMarkers, wrapExternalContent } from './safety.js';
