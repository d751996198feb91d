export { parseDurationMs } from './duration.js';
export { appendToArray, setValue } from './edit.js';
export { pathsMeet } from './env.js';
export { mappingSchema } from './hook-schemas.js';
export { checkKeys, HTTP_URL, type KeysSchema } from './keys.js';
export {
  configInvalid,
  configWarnings,
  inspectConfig,
  loadConfig,
  MAX_CONFIG_BYTES,
  normalizeHooksPath,
} from './load.js';
export { keyPositions, locate, type Position, stringCharPosition } from './locate.js';
export { formatSchemaErrors } from './schema-errors.js';
export { didYouMean, nearest } from './suggest.js';
export type {
  AgentDefaults,
  Config,
  HooksConfig,
  MailConfig,
  MappingConfig,
} from './types.js';
