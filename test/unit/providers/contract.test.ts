import { afterEach, describe, expect, it } from 'vitest';
import { isHookdError } from '../../../src/errors.js';
import {
  createAnthropicMessagesProvider,
  createBuiltinProvider,
  createOpenAiChatProvider,
  PROVIDER_APIS,
} from '../../../src/providers/index.js';
import type { ModelProvider } from '../../../src/runtime/index.js';
import { startFakeAnthropic } from '../../helpers/fake-anthropic.js';
import { type FakeModel, startFakeModel } from '../../helpers/fake-model.js';

/**
 * The contract every model provider keeps with the runtime (docs/runtime.md#providers), one
 * suite over each: a reply for the session's messages, the caller's abort honoured, and a
 * failure that is a coded error whose message is safe to store (no API key). The runtime owns
 * retries and time, so a provider makes one try.
 */
interface Subject {
  readonly provider: ModelProvider;
  /** A model the provider answers. */
  readonly model: string;
  /** A call that fails on the provider's side, and the key that must never show in its message. */
  readonly failing: { readonly model: string; readonly secret?: string };
  /** What the provider was sent, when it talks to a server. */
  readonly sent?: () => readonly { role: string; content: string }[][];
  close(): Promise<void>;
}

const API_KEY = 'sk-contract-secret-0123456789';

const subjects: Record<string, () => Promise<Subject>> = {
  'builtin/echo': async () => ({
    provider: createBuiltinProvider(),
    model: 'echo',
    failing: { model: 'not-a-model' },
    close: async () => {},
  }),
  'openai-chat (against a real OpenAI-compatible server)': async () => {
    const server: FakeModel = await startFakeModel((request) =>
      request.model === 'broken'
        ? { status: 503, body: { error: { message: `overloaded; your key ${API_KEY} is fine` } } }
        : `reply to: ${request.messages.at(-1)?.content}`,
    );
    return {
      provider: createOpenAiChatProvider({ baseUrl: server.url, api: 'openai-chat', apiKey: API_KEY }),
      model: 'm',
      failing: { model: 'broken', secret: API_KEY },
      sent: () => server.requests.map((r) => r.messages),
      close: () => server.close(),
    };
  },
  'anthropic-messages (against a fake of the Messages API)': async () => {
    const server = await startFakeAnthropic((request) =>
      request.model === 'broken'
        ? { status: 529, message: `Overloaded; your key ${API_KEY} is fine` }
        : `reply to: ${request.messages.at(-1)?.content}`,
    );
    return {
      provider: createAnthropicMessagesProvider({ baseUrl: server.url, apiKey: API_KEY }),
      model: 'claude-test',
      failing: { model: 'broken', secret: API_KEY },
      sent: () => server.requests.map((r) => r.messages),
      close: () => server.close(),
    };
  },
};

describe('the provider contract suite', () => {
  it('covers every registered API', () => {
    const covered = new Set(Object.keys(subjects).map((name) => name.split(' ')[0]));
    expect(Object.keys(PROVIDER_APIS).filter((api) => !covered.has(api))).toEqual([]);
  });
});

let open: Subject | undefined;
afterEach(async () => {
  await open?.close();
  open = undefined;
});

describe.each(Object.entries(subjects))('the provider contract: %s', (_name, make) => {
  it('answers the last message with a reply, the earlier ones sent before it in order', async () => {
    open = await make();
    const messages = [
      { role: 'user' as const, content: 'first' },
      { role: 'assistant' as const, content: 'noted' },
      { role: 'user' as const, content: 'what changed?' },
    ];
    const reply = await open.provider.complete({ model: open.model, messages, signal: new AbortController().signal });
    expect(typeof reply).toBe('string');
    expect(reply).toContain('what changed?');
    if (open.sent) expect(open.sent().at(-1)).toEqual(messages);
  });

  it('rejects with the signal’s reason when the call is aborted, and answers nothing after', async () => {
    open = await make();
    const controller = new AbortController();
    const reason = new Error('run timed out');
    controller.abort(reason);
    const call = open.provider.complete({
      model: open.model,
      messages: [{ role: 'user', content: 'hello' }],
      signal: controller.signal,
    });
    await expect(call).rejects.toBe(reason);
  });

  it('fails with a coded MODEL_ error whose message is safe to store', async () => {
    open = await make();
    const failure = await open.provider
      .complete({
        model: open.failing.model,
        messages: [{ role: 'user', content: 'hello' }],
        signal: new AbortController().signal,
      })
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    expect(isHookdError(failure)).toBe(true);
    expect((failure as { code: string }).code).toMatch(/^MODEL_/);
    if (open.failing.secret) expect((failure as Error).message).not.toContain(open.failing.secret);
  });
});
