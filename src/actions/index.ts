export { createModelCatalog, type ModelCatalog } from './models.js';
export type {
  AcceptContext,
  Accepted,
  Action,
  ActionSink,
  AgentAction,
  Channel,
  ContentSource,
  FailedRequest,
  IdempotentAnswer,
  ThinkingLevel,
  WakeMode,
} from './types.js';
export { type ActionOptions, parseAgentBody, parseWakeBody } from './validate.js';
