export type { HookOutcomes } from './alerts/index.js';
export { isAckOnly } from './delivery/index.js';
export { defaultLimits, type TargetLimits } from './isolation/index.js';
export { createJobOwner } from './job-owner.js';
export type { ChatChannel, CompletionRequest, DeliveryContext, ModelProvider, ModelRouter } from './ports.js';
export type { ActivityFeed, AdminQueries } from './queries/index.js';
export type { CancelAnswer } from './runs/index.js';
export { createRuntime, type Runtime } from './runtime.js';
export { findInjectionPhrases, sanitizeMarkers, unwrapExternalContent, wrapExternalContent } from './safety/index.js';
