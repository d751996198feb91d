import { afterEach, describe, expect, it } from 'vitest';
import type { ThinkingLevel } from '../../../src/action-shape.js';
import { type HookdError, isHookdError } from '../../../src/errors.js';
import { createAnthropicMessagesProvider } from '../../../src/providers/index.js';
import { failureOf } from '../../../src/runtime/attempts/index.js';
import { type AnthropicReply, type FakeAnthropic, startFakeAnthropic } from '../../helpers/fake-anthropic.js';

let api: FakeAnthropic | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

const KEY = 'sk-ant-secret-0123456789';
const start = async (reply: AnthropicReply | ((i: number) => AnthropicReply), extra: { maxTokens?: number } = {}) => {
  api = await startFakeAnthropic((_r, i) => (typeof reply === 'function' ? reply(i) : reply));
  return createAnthropicMessagesProvider({ baseUrl: `${api.url}/`, apiKey: KEY, ...extra });
};
const messages = [
  { role: 'system' as const, content: 'You are terse.' },
  { role: 'user' as const, content: 'first' },
  { role: 'assistant' as const, content: 'noted' },
  { role: 'user' as const, content: 'what changed?' },
];
const ask = (provider: Awaited<ReturnType<typeof start>>, thinking?: ThinkingLevel) =>
  provider.complete({
    model: 'claude-x',
    messages,
    ...(thinking ? { thinking } : {}),
    signal: AbortSignal.timeout(5000),
  });
const failing = (provider: Awaited<ReturnType<typeof start>>) =>
  ask(provider).then(
    () => {
      throw new Error('the call succeeded');
    },
    (err: unknown) => err as HookdError,
  );

describe('anthropic-messages provider', () => {
  it('posts the turns with system apart, max_tokens, the key and the API version', async () => {
    const provider = await start('all good');
    await expect(ask(provider)).resolves.toBe('all good');
    expect(api?.requests[0]).toEqual({
      model: 'claude-x',
      max_tokens: 4096,
      system: 'You are terse.',
      messages: messages.slice(1),
      headers: { 'x-api-key': KEY, 'anthropic-version': '2023-06-01' },
    });
  });

  it.each([
    ['low', 1024],
    ['medium', 4096],
    ['high', 16384],
  ] as const)('sends thinking %s as a budget of %i tokens, max_tokens raised above it', async (level, budget) => {
    const provider = await start('ok', { maxTokens: 2000 });
    await ask(provider, level);
    expect(api?.requests[0]).toMatchObject({
      thinking: { type: 'enabled', budget_tokens: budget },
      max_tokens: budget + 2000,
    });
  });

  it('sends no thinking when it is off', async () => {
    const provider = await start('ok');
    await ask(provider, 'off');
    expect(api?.requests[0]?.thinking).toBeUndefined();
    expect(api?.requests[0]?.max_tokens).toBe(4096);
  });

  it('answers the text blocks only: thinking is never a reply', async () => {
    const provider = await start({
      blocks: [
        { type: 'thinking', thinking: 'secret chain of thought' },
        { type: 'text', text: 'Part one. ' },
        { type: 'text', text: 'Part two.' },
      ],
    });
    await expect(ask(provider)).resolves.toBe('Part one. Part two.');
  });

  it('says an answer without a text block is not a reply', async () => {
    const provider = await start({ blocks: [{ type: 'thinking', thinking: 'only thoughts' }] });
    expect(await failing(provider)).toMatchObject({ code: 'MODEL_INVALID_ANSWER' });
  });

  it.each([
    [429, 3],
    [529, undefined],
    [500, undefined],
  ])('says %i with its Retry-After as a refusal to retry, the key masked', async (status, retryAfter) => {
    const provider = await start({ status, message: `busy (key ${KEY})`, ...(retryAfter ? { retryAfter } : {}) });
    const err = await failing(provider);
    expect(isHookdError(err, 'MODEL_REFUSED')).toBe(true);
    expect(err.message).toContain('busy (key [REDACTED])');
    expect(failureOf(err)).toMatchObject({
      transient: true,
      ...(retryAfter ? { retryAfterMs: retryAfter * 1000 } : {}),
    });
  });

  it('says "prompt is too long" is a context-length refusal, and another 400 is not', async () => {
    const provider = await start((i) =>
      i === 0
        ? { status: 400, message: 'prompt is too long: 210000 tokens > 200000 maximum' }
        : { status: 400, message: 'max_tokens: 90000 > 64000, which is the maximum allowed tokens' },
    );
    expect((await failing(provider)).code).toBe('MODEL_CONTEXT_EXCEEDED');
    const other = await failing(provider);
    expect(other.code).toBe('MODEL_REFUSED');
    expect(failureOf(other).transient).toBe(false);
  });
});
