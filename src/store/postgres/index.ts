/** The PostgreSQL store, loaded only by a gateway that runs on it (pg costs about 50 ms to load). */
export { pgBackend } from './backend.js';
export { CLOCK_SKEW_WARN_MS, type ClockSkewWatch, watchClockSkew } from './clock.js';
export { createPgPool } from './contract.js';
export { connectionRoomWarning, diagnosePostgres, startProblem } from './diagnose.js';
export { migratePostgres } from './migrate.js';
