import { afterEach, describe, expect, it } from 'vitest';
import { type HookdError, isHookdError } from '../../../src/errors.js';
import { createOpenAiChatProvider } from '../../../src/providers/index.js';
import { CONTEXT_REFUSAL, type FakeModel, startFakeModel } from '../../helpers/fake-model.js';

let model: FakeModel | undefined;
afterEach(async () => {
  await model?.close();
  model = undefined;
});

const ask = (provider: ReturnType<typeof createOpenAiChatProvider>, signal = AbortSignal.timeout(5000)) =>
  provider.complete({ model: 'llama3.1', messages: [{ role: 'user', content: 'hi' }], thinking: 'low', signal });

/** The error one try rejects with. */
const failureOf = async (provider: ReturnType<typeof createOpenAiChatProvider>) =>
  (await ask(provider).then(
    () => undefined,
    (err: unknown) => err,
  )) as HookdError;

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

  it('makes one try, and says a 5xx or 429 with its status and Retry-After for the runtime to retry', async () => {
    model = await startFakeModel((_r, i) => (i === 0 ? { status: 429, retryAfter: 2 } : { status: 503 }));
    const provider = createOpenAiChatProvider({ baseUrl: model.url, api: 'openai-chat' });
    const throttled = await failureOf(provider);
    expect(isHookdError(throttled, 'MODEL_REFUSED')).toBe(true);
    expect(throttled.params).toEqual({
      status: 429,
      excerpt: '{"error":{"message":"fake error"}}',
      retryAfterMs: 2000,
    });
    const down = await failureOf(provider);
    expect(down.params).toEqual({ status: 503, excerpt: '{"error":{"message":"fake error"}}' });
    expect(model.requests).toHaveLength(2);
    expect(model.requests[0]).not.toHaveProperty('authorization');
  });

  it('masks the API key in an error body that echoes it, and keeps at most 300 characters', async () => {
    const apiKey = 'sk-live-0123456789abcdef';
    model = await startFakeModel(() => ({
      status: 401,
      body: { error: { message: `invalid key: ${apiKey} ${'x'.repeat(400)}` } },
    }));
    const provider = createOpenAiChatProvider({ baseUrl: model.url, apiKey, api: 'openai-chat' });
    const failure = await failureOf(provider);
    expect(failure.message).toMatch(/answered 401: .*invalid key: \[REDACTED\]/);
    expect(failure.message).not.toContain('sk-live');
    expect((failure.params as { excerpt: string }).excerpt).toHaveLength(300);
  });

  it('reads a content array’s text parts, and one without any as no content (never an empty reply)', async () => {
    const contents = [[{ type: 'text', text: 'a' }, null, { type: 'text', text: 'b' }], [null, 1, { text: 5 }], []];
    model = await startFakeModel((_, index) => ({
      status: 200,
      body: { choices: [{ message: { role: 'assistant', content: contents[index] } }] },
    }));
    const provider = createOpenAiChatProvider({ baseUrl: model.url, api: 'openai-chat' });
    await expect(ask(provider)).resolves.toBe('ab');
    for (let n = 0; n < 2; n++) expect((await failureOf(provider)).params).toEqual({ problem: 'no-content' });
  });

  it('refuses an answer nested deeper than 64 levels before parsing it (8 MiB of them held the thread 2.4 s)', async () => {
    const nested = (depth: number) => JSON.parse(`${'['.repeat(depth)}${']'.repeat(depth)}`) as unknown;
    model = await startFakeModel((_, index) => ({ status: 200, body: index === 0 ? nested(65) : nested(64) }));
    const provider = createOpenAiChatProvider({ baseUrl: model.url, api: 'openai-chat' });
    const deep = await failureOf(provider);
    expect(deep.code).toBe('MODEL_INVALID_ANSWER');
    expect(deep.message).toBe('the model server answered JSON nested deeper than 64 levels');
    // 64 levels are read, and found to hold no answer.
    expect((await failureOf(provider)).params).toEqual({ problem: 'no-content' });
  });

  it('masks the API key URL-encoded or JSON-escaped in an error body, as a server may quote it', async () => {
    const apiKey = 'sk-live/0123"abc+def ghi';
    const lower = encodeURIComponent(apiKey).replace(/%[0-9A-F]{2}/g, (hex) => hex.toLowerCase());
    const bodies = [
      `bad key ${encodeURIComponent(apiKey)}`,
      { detail: { key: apiKey } },
      `bad key ${lower}`,
      `bad key ${encodeURIComponent(apiKey).replace(/%20/g, '+')}`,
    ];
    model = await startFakeModel((_, index) => ({ status: 401, body: bodies[index] }));
    const provider = createOpenAiChatProvider({ baseUrl: model.url, apiKey, api: 'openai-chat' });
    const excerpts: string[] = [];
    for (const _ of bodies) excerpts.push(((await failureOf(provider)).params as { excerpt: string }).excerpt);
    expect(excerpts.slice(0, 2)).toEqual(['"bad key [REDACTED]"', '{"detail":{"key":"[REDACTED]"}}']);
    for (const excerpt of excerpts.slice(2)) expect(excerpt).toMatch(/^"bad key \[REDACTED\]"$/);
  });

  it.each([
    ['OpenAI', CONTEXT_REFUSAL],
    [
      'llama.cpp',
      {
        error: {
          code: 400,
          message: 'the request exceeds the available context size, try increasing it',
          type: 'exceed_context_size_error',
        },
      },
    ],
    [
      'vLLM',
      {
        object: 'error',
        message:
          "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens (8000 in the messages, 1000 in the completion).",
        type: 'BadRequestError',
        code: 400,
      },
    ],
  ])('classifies a context-length refusal from %s as MODEL_CONTEXT_EXCEEDED', async (_server, body) => {
    model = await startFakeModel(() => ({ status: 400, body }));
    const provider = createOpenAiChatProvider({ baseUrl: model.url, api: 'openai-chat' });
    const failure = await failureOf(provider);
    expect(failure.code).toBe('MODEL_CONTEXT_EXCEEDED');
    expect(failure.message).toMatch(/^the model server refused the request as too long for its context \(HTTP 400\): /);
  });

  it('keeps a 400 that names no context a plain refusal', async () => {
    model = await startFakeModel(() => ({ status: 400, body: { error: { message: 'bad model' } } }));
    const failure = await failureOf(createOpenAiChatProvider({ baseUrl: model.url, api: 'openai-chat' }));
    expect(failure.code).toBe('MODEL_REFUSED');
    expect(failure.message).toBe('the model server answered 400: {"error":{"message":"bad model"}}');
  });

  it('says MODEL_UNREACHABLE with the network error when nothing listens', async () => {
    const provider = createOpenAiChatProvider({ baseUrl: 'http://127.0.0.1:9/v1', apiKey: 'sk-9', api: 'openai-chat' });
    const failure = await failureOf(provider);
    expect(failure.code).toBe('MODEL_UNREACHABLE');
    expect(failure.message).toMatch(/^the model server is unreachable: .*ECONNREFUSED/);
  });

  it('says a 2xx of JSON that is no object (null) is no answer, not an unreachable server to retry', async () => {
    model = await startFakeModel(() => ({ status: 200, body: null }));
    const failure = await failureOf(createOpenAiChatProvider({ baseUrl: model.url, api: 'openai-chat' }));
    expect(failure.code).toBe('MODEL_INVALID_ANSWER');
    expect(failure.message).toBe('the model answered without choices[0].message.content');
  });

  it('waits at most 5 minutes for a Retry-After (a longer timer would fire at once)', async () => {
    model = await startFakeModel(() => ({ status: 429, retryAfter: 99_999_999 }));
    const failure = await failureOf(createOpenAiChatProvider({ baseUrl: model.url, api: 'openai-chat' }));
    expect(failure.params).toMatchObject({ status: 429, retryAfterMs: 300_000 });
  });
});
