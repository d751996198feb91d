export { createModelCatalog, type ModelCatalog } from './models.js';
export {
  type AcceptContext,
  type Accepted,
  type Action,
  type ActionSink,
  type AgentAction,
  CHANNELS,
  type Channel,
  type ContentSource,
  type FailedRequest,
  type IdempotencyIntent,
  type IdempotentAnswer,
  THINKING_LEVELS,
  type ThinkingLevel,
  WAKE_MODES,
  type WakeAction,
  type WakeMode,
} from './types.js';
export { type ActionOptions, MAX_TIMEOUT_SECONDS, parseAgentBody, parseWakeBody } from './validate.js';
