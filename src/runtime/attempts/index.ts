export { type Attempt, type Failure, failureOf, lastText, tryError } from './attempt.js';
export { sendWithRetries } from './channel-tries.js';
export { OPEN_GATE, type TryGate } from './gate.js';
export { completeWithRetries } from './model-tries.js';
export { charsOf, createPromptBudgets, historyWithin, type PromptBudgets, shortened } from './prompt-budget.js';
export { type AttemptOwner, createAttemptRecorder } from './recorder.js';
