export { createClaimedRunQueue } from './claimed-runs.js';
export { createIngressPressure } from './pressure.js';
export { createRunQueue } from './run-queue.js';
