import type { FromSchema } from 'json-schema-to-ts';
import type { mappingSchema } from './hook-schemas.js';
import type { configSchema } from './schema.js';

/** The configuration as validated, with defaults filled in. */
export type RawConfig = FromSchema<typeof configSchema>;

/** One entry of `hooks.mappings` (or a preset). */
export type MappingConfig = FromSchema<typeof mappingSchema>;

type Defined<T> = Exclude<T, undefined>;

/** The loaded configuration: validated, defaults applied, paths absolute, frozen. */
export type Config = DeepReadonly<
  RawConfig & {
    /** The folder relative paths were resolved against. */
    baseDir: string;
    /** The config file, when one was given. */
    file?: string;
  }
>;

export type HooksConfig = Config['hooks'];
export type AgentDefaults = Config['agents']['defaults'];
export type MailConfig = Defined<Config['hooks']['mail']>;

/** Recursively readonly, for frozen values. */
export type DeepReadonly<T> = T extends (...args: never[]) => unknown
  ? T
  : T extends readonly (infer U)[]
    ? readonly DeepReadonly<U>[]
    : T extends object
      ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
      : T;
