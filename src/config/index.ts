export { parseDurationMs } from './duration.js';
export { appendToArray, setValue } from './edit.js';
export { configInvalid, type LoadConfigOptions, loadConfig, normalizeHooksPath } from './load.js';
export { configSchema, mappingSchema } from './schema.js';
export type {
  AgentDefaults,
  ChatnetConfig,
  Config,
  DeepReadonly,
  HooksConfig,
  MailConfig,
  MappingConfig,
  ProviderConfig,
  RawConfig,
} from './types.js';
