export type { AlertFilter, AlertRecord, StoredAlert } from './alerts.js';
export type { RunAttempt } from './attempts.js';
export type {
  ClaimedRun,
  ConsoleSessionStore,
  MetaStore,
  SinkOptions,
  StoreBackend,
  StoreContract,
  WorkShare,
  Writes,
} from './contract.js';
export type { EventRecord } from './events.js';
export { type FailureLog, failureLog, TICK_FAILURE_LOG_MS } from './failure-log.js';
export { LINGER, type WriteOptions } from './group-commit.js';
export type { SessionMessage } from './messages.js';
export type { RequestLogEntry, RequestLogFilter, RequestLogRecord } from './requests.js';
export {
  createLogRetention,
  type RetentionOutcome,
  type RetentionPolicy,
} from './retention.js';
export type { DeliveryOutcome, RunListFilter, RunRecord, RunStatusRow } from './runs.js';
export { gatewayTokenFile, generateToken, readOrCreateSecret, readSecretAsClient } from './secrets.js';
export { acceptError, causeOf, failureFields, isStoreUnavailable } from './unavailable.js';
