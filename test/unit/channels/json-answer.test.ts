import { describe, expect, it } from 'vitest';
import { jsonOf } from '../../../src/channels/kind.js';

/** A chat API's answer as a channel reads it (docs/channels.md). */
describe('jsonOf', () => {
  const nested = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

  it('reads an answer up to 64 levels deep, and none deeper: it is not parsed', () => {
    expect(jsonOf<{ a: unknown }>(nested(64)).a).toBeDefined();
    expect(jsonOf(nested(65))).toEqual({});
    expect(jsonOf('{"ok":true,"result":{"message_id":7}}')).toEqual({ ok: true, result: { message_id: 7 } });
    expect(jsonOf('not json')).toEqual({});
    expect(jsonOf('[1]')).toEqual([1]);
  });
});
