export { type Attempt, failureOf, lastText, type OnFailure, tryError } from './attempt.js';
export { sendWithRetries } from './channel-tries.js';
export type { TryGate } from './gate.js';
export { completeWithRetries } from './model-tries.js';
export { charsOf, createPromptBudgets, historyWithin, type PromptBudgets, shortened } from './prompt-budget.js';
export { type AttemptOwner, createAttemptRecorder } from './recorder.js';
