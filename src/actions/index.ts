export { createModelCatalog, type ModelCatalog } from './models.js';
export type {
  AcceptContext,
  Accepted,
  Action,
  ActionSink,
  AgentAction,
  FailedRequest,
  IdempotencyIntent,
  IdempotentAnswer,
  RequestLogRecord,
  RequestOpening,
  RequestReceipt,
  StoredRequest,
} from './types.js';
export {
  type ActionOptions,
  expectedChannel,
  MADE_KEY_PREFIX,
  parseAgentBody,
  parseWakeBody,
  runIdFor,
  startsItsSession,
} from './validate.js';
