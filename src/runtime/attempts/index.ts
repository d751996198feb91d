export {
  type Attempt,
  failureOf,
  lastText,
  type OnFailure,
  type TryTarget,
  tryError,
  unanswered,
} from './attempt.js';
export { DELIVERY_TRY_SECONDS, sendWithRetries } from './channel-tries.js';
export type { TryGate } from './gate.js';
export { completeWithRetries } from './model-tries.js';
export { charsOf, createPromptBudgets, historyWithin, type PromptBudgets, shortened } from './prompt-budget.js';
export { type AttemptOwner, type AttemptRecorderOptions, createAttemptRecorder } from './recorder.js';
