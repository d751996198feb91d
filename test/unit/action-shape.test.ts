import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  ACTION_FIELDS,
  type ActionField,
  TEMPLATED_FIELDS,
  THINKING_LEVELS,
  WAKE_MODES,
} from '../../src/action-shape.js';
import { configSchema } from '../../src/config/schema.js';
import { mergeTransformResult } from '../../src/mapping/index.js';
import type { PartialAction } from '../../src/transforms/authoring.js';

const mappingProperties = configSchema.properties.hooks.properties.mappings.items.properties;

describe('the action shape, declared once', () => {
  it('gives the mapping schema one string key per templated field', () => {
    expect(TEMPLATED_FIELDS.map((t) => t.field)).toEqual([
      'text',
      'message',
      'name',
      'sessionKey',
      'channel',
      'to',
      'model',
      'thinking',
    ]);
    for (const { template } of TEMPLATED_FIELDS) expect(mappingProperties).toHaveProperty([template, 'type'], 'string');
  });

  it('gives the schema, the validators and the transform types the same enums', () => {
    expect(mappingProperties.wakeMode.enum).toBe(WAKE_MODES);
    expect(configSchema.properties.agents.properties.defaults.properties.thinking.enum).toBe(THINKING_LEVELS);
    // A channel is a configured id or `last`: a string, checked against the config (docs/channels.md).
    expect(ACTION_FIELDS.channel.type).toBe('string');
    expectTypeOf<PartialAction['channel']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<keyof PartialAction>().toEqualTypeOf<ActionField>();
    expectTypeOf<PartialAction['mode']>().toEqualTypeOf<(typeof WAKE_MODES)[number] | undefined>();
  });

  it('lets a transform return every field of the shape and nothing else', () => {
    const everyField = { kind: 'agent', text: 't', mode: 'now', message: 'm', name: 'n', sessionKey: 'hook:x' };
    const rest = { wakeMode: 'now', deliver: false, channel: 'last', to: '1', model: 'a/b', thinking: 'low' };
    const result = { ...everyField, ...rest, timeoutSeconds: 5 };
    expect(Object.keys(result).sort()).toEqual(Object.keys(ACTION_FIELDS).sort());
    expect(mergeTransformResult({ kind: 'wake' }, result).drafts).toEqual([result]);
    expect(() => mergeTransformResult({ kind: 'wake' }, { allowUnsafeExternalContent: true })).toThrow(
      expect.objectContaining({ code: 'TRANSFORM_FAILED' }),
    );
  });
});
