/**
 * The operator's side: the admin API, the console and its sign-in, replay, the live stream,
 * the request log's queries, the playground's dry run, health and metrics.
 */
export { adminRoutes } from './admin.js';
export { consoleRoutes } from './console.js';
export { type ConsoleSessions, createConsoleAuth } from './console-auth.js';
export { dryRun } from './dry-run.js';
export { healthRoutes } from './health.js';
export { hostGuardOf } from './host-guard.js';
export { createReplayer } from './replay.js';
