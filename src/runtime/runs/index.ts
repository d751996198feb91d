export { type CancelAnswer, cancelRun } from './cancel.js';
export { createClaimedRunQueue } from './claimed-runs.js';
export { createIngressPressure, type IngressPressure } from './pressure.js';
export { sourceOf } from './run-gate.js';
export { createRunQueue } from './run-queue.js';
export type { RunQueue } from './types.js';
