import { describe, expect, it } from 'vitest';
import { createBuiltinProvider } from '../../../src/providers/index.js';
import { wrapExternalContent } from '../../../src/runtime/index.js';

describe('builtin provider', () => {
  const echo = createBuiltinProvider();
  const signal = AbortSignal.timeout(1000);
  it('restates what it received, without the safety wrapper', async () => {
    const reply = await echo.complete({
      model: 'echo',
      messages: [{ role: 'user', content: wrapExternalContent('ping') }],
      signal,
    });
    expect(reply).toBe('Echo: ping');
  });
  it('answers HEARTBEAT_OK to an empty message and refuses unknown models', async () => {
    await expect(echo.complete({ model: 'echo', messages: [{ role: 'user', content: '' }], signal })).resolves.toBe(
      'HEARTBEAT_OK',
    );
    await expect(echo.complete({ model: 'gpt', messages: [], signal })).rejects.toMatchObject({
      code: 'MODEL_UNKNOWN',
    });
  });
});
