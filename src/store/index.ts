export { type Checkpointer, startCheckpointer, WRITER_AUTOCHECKPOINT_PAGES } from './checkpointer.js';
export type { ConsoleSessionRepository } from './console-sessions.js';
export {
  type ClaimedRun,
  type MetaStore,
  promisedAll,
  type SinkOptions,
  type StoreBackend,
  type StoreContract,
  sqliteContract,
  type WorkShare,
  type Writes,
} from './contract.js';
export { type EventRecord, hookEvent } from './events.js';
export { idempotencyRecordOf } from './idempotency.js';
export type { SessionMessage } from './messages.js';
/** The PostgreSQL store, loaded on first use: a gateway on SQLite never loads pg. */
export const loadPostgres = () => import('./postgres/entry.js');
export type { RequestLogEntry, RequestLogFilter, RequestLogRecord } from './requests.js';
export { type DeliveryOutcome, hookRun, type RunListFilter, type RunRecord, type RunStatus } from './runs.js';
export { gatewayTokenFile, generateToken, readOrCreateSecret } from './secrets.js';
export { createStore, type Store } from './store.js';
export { acceptError } from './unavailable.js';
