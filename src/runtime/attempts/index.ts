export { type Attempt, type Failure, failureOf, lastText } from './attempt.js';
export { sendWithRetries } from './channel-tries.js';
export { completeWithRetries } from './model-tries.js';
export { charsOf, createPromptBudgets, historyWithin, type PromptBudgets, shortened } from './prompt-budget.js';
export { type AttemptOwner, createAttemptRecorder } from './recorder.js';
