import { afterEach, describe, expect, it, vi } from 'vitest';
import { isHookdError } from '../../../src/errors.js';
import { createOpenAiChatProvider } from '../../../src/providers/index.js';
import { until, waits } from '../../helpers/clock.js';
import { type FakeModel, startFakeModel } from '../../helpers/fake-model.js';

vi.mock('node:timers/promises', async (importOriginal) =>
  (await import('../../helpers/clock.js')).timersOnGlobalClock(await importOriginal()),
);

let model: FakeModel | undefined;
afterEach(async () => {
  vi.useRealTimers();
  waits.length = 0;
  await model?.close();
  model = undefined;
});

/** Fake timeouts only: sockets, and the fake model server, stay real. */
const fakeTimeouts = () => vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });

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

  it('retries a 429 after its Retry-After and a 5xx after the back-off, then succeeds', async () => {
    model = await startFakeModel((_r, i) =>
      i === 0 ? { status: 429, retryAfter: 2 } : i === 1 ? { status: 503 } : 'third time',
    );
    const provider = createOpenAiChatProvider({ baseUrl: model.url, api: 'openai-chat' });
    fakeTimeouts();
    const answer = ask(provider, new AbortController().signal);
    await until(() => waits.length === 1);
    expect(waits[0]?.delayMs).toBe(2000);
    await vi.advanceTimersByTimeAsync(2000);
    await until(() => waits.length === 2);
    expect(waits[1]?.delayMs).toBe(500);
    await vi.advanceTimersByTimeAsync(500);
    await expect(answer).resolves.toBe('third time');
    expect(model.requests).toHaveLength(3);
    expect(model.requests[0]).not.toHaveProperty('authorization');
  });

  it('fails at once on a 4xx other than 429', async () => {
    model = await startFakeModel(() => ({ status: 400, body: { error: { message: 'bad model' } } }));
    const provider = createOpenAiChatProvider({ baseUrl: model.url, api: 'openai-chat' });
    await expect(ask(provider)).rejects.toThrow(/answered 400/);
    expect(model.requests).toHaveLength(1);
  });

  it('masks the API key in an error body that echoes it', async () => {
    const apiKey = 'sk-live-0123456789abcdef';
    model = await startFakeModel(() => ({ status: 401, body: { error: { message: `invalid key: ${apiKey}` } } }));
    const provider = createOpenAiChatProvider({ baseUrl: model.url, apiKey, api: 'openai-chat' });
    const failure = await ask(provider).catch((err: Error) => err);
    expect((failure as Error).message).toMatch(/answered 401: .*invalid key: \[REDACTED\]/);
    expect((failure as Error).message).not.toContain('sk-live');
  });

  it('backs off 0.25 s doubling up to 5 s while 5xx go on, and gives up when the signal aborts', async () => {
    model = await startFakeModel(() => ({ status: 500 }));
    const provider = createOpenAiChatProvider({ baseUrl: model.url, api: 'openai-chat' });
    const shutdown = new AbortController();
    fakeTimeouts();
    const answer = ask(provider, shutdown.signal);
    for (const [n, delayMs] of [250, 500, 1000, 2000, 4000, 5000, 5000].entries()) {
      await until(() => waits.length === n + 1);
      expect(waits[n]?.delayMs).toBe(delayMs);
      if (n < 6) await vi.advanceTimersByTimeAsync(delayMs);
    }
    shutdown.abort(new Error('shutting down'));
    // What failed is kept, not only that the call was cut off (issue 17).
    const failure = await answer.catch((err: unknown) => err);
    expect(isHookdError(failure, 'MODEL_UNAVAILABLE')).toBe(true);
    expect((failure as Error).message).toBe(
      'the model server failed 7 times, last: HTTP 500 {"error":{"message":"fake error"}}',
    );
    expect(model.requests).toHaveLength(7);
  });

  it('says which network error it kept retrying when a server refuses connections until the time limit', async () => {
    const provider = createOpenAiChatProvider({ baseUrl: 'http://127.0.0.1:9/v1', apiKey: 'sk-9', api: 'openai-chat' });
    const failure = await ask(provider, AbortSignal.timeout(900)).catch((err: unknown) => err);
    expect(isHookdError(failure, 'MODEL_UNAVAILABLE')).toBe(true);
    expect((failure as Error).message).toMatch(/^the model server failed \d+ times?, last: .*ECONNREFUSED/);
  });
});
