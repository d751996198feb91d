import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../../src/config/schema.js';

describe('the config schema', () => {
  it('is a valid JSON Schema (loadConfig skips this check at start-up)', () => {
    const ajv = new Ajv({ strict: false });
    expect(ajv.validateSchema(configSchema), JSON.stringify(ajv.errors)).toBe(true);
    expect(ajv.validateSchema({ type: 'object', properties: { a: { type: 'no-such-type' } } })).toBe(false);
  });
});
