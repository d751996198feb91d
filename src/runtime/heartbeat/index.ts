export { createHeartbeat, type Heartbeat } from './heartbeat.js';
export { createOwnedHeartbeat } from './heartbeat-owner.js';
