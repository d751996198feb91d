export { parseDurationMs } from './duration.js';
export { appendToArray, setValue } from './edit.js';
export { configInvalid, loadConfig, normalizeHooksPath } from './load.js';
export type {
  AgentDefaults,
  ChatnetConfig,
  Config,
  HooksConfig,
  MailConfig,
  MappingConfig,
  ProviderConfig,
} from './types.js';
