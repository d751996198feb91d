import { afterEach, describe, expect, it } from 'vitest';
import { createOpenAiChatProvider } from '../../../src/providers/index.js';
import { type FakeModel, startFakeModel } from '../../helpers/fake-model.js';

let model: FakeModel | undefined;
afterEach(async () => {
  await model?.close();
  model = undefined;
});

const ask = (provider: ReturnType<typeof createOpenAiChatProvider>, signal = AbortSignal.timeout(5000)) =>
  provider.complete({ model: 'llama3.1', messages: [{ role: 'user', content: 'hi' }], thinking: 'low', signal });

describe('openai-chat provider', () => {
  it('posts model, messages and reasoning_effort with the API key, and returns the content', async () => {
    model = await startFakeModel(() => 'hello back');
    const provider = createOpenAiChatProvider({ baseUrl: `${model.url}/`, apiKey: 'k-1', api: 'openai-chat' });
    await expect(ask(provider)).resolves.toBe('hello back');
    expect(model.requests[0]).toEqual({
      model: 'llama3.1',
      messages: [{ role: 'user', content: 'hi' }],
      reasoning_effort: 'low',
      authorization: 'Bearer k-1',
    });
  });

  it('retries 429 (honouring Retry-After) and 5xx, then succeeds', async () => {
    model = await startFakeModel((_r, i) =>
      i === 0 ? { status: 429, retryAfter: 0 } : i === 1 ? { status: 503 } : 'third time',
    );
    const provider = createOpenAiChatProvider({ baseUrl: model.url, api: 'openai-chat' });
    await expect(ask(provider)).resolves.toBe('third time');
    expect(model.requests).toHaveLength(3);
    expect(model.requests[0]).not.toHaveProperty('authorization');
  });

  it('fails at once on a 4xx other than 429', async () => {
    model = await startFakeModel(() => ({ status: 400, body: { error: { message: 'bad model' } } }));
    const provider = createOpenAiChatProvider({ baseUrl: model.url, api: 'openai-chat' });
    await expect(ask(provider)).rejects.toThrow(/answered 400/);
    expect(model.requests).toHaveLength(1);
  });

  it('gives up when the signal aborts during retries', async () => {
    model = await startFakeModel(() => ({ status: 500 }));
    const provider = createOpenAiChatProvider({ baseUrl: model.url, api: 'openai-chat' });
    await expect(ask(provider, AbortSignal.timeout(600))).rejects.toThrow();
    expect(model.requests.length).toBeGreaterThan(1);
  });
});
