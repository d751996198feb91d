import { Ajv } from 'ajv';
import { configSchema, validatorOptions } from './schema.js';
import type { RawConfig } from './types.js';

/**
 * The config validator, compiled from the schema when hookd runs from src/. The build
 * (scripts/build.mjs) replaces this module with the same validator compiled ahead of time by
 * ajv's standalone code generator: compiling it at every start cost about 50 ms.
 */
export const validateConfig = new Ajv(validatorOptions).compile<RawConfig>(configSchema);
