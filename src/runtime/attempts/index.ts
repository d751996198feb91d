export { type Attempt, lastText } from './attempt.js';
export { sendWithRetries } from './channel-tries.js';
export { completeWithRetries } from './model-tries.js';
export { charsOf, createPromptBudgets, historyWithin, type PromptBudgets, shortened } from './prompt-budget.js';
export { createAttemptRecorder } from './recorder.js';
