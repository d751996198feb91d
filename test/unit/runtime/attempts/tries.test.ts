import { afterEach, describe, expect, it } from 'vitest';
import { createChatnetChannel } from '../../../../src/channels/index.js';
import { isHookdError } from '../../../../src/errors.js';
import { createModelRouter } from '../../../../src/providers/index.js';
import { type Attempt, completeWithRetries, sendWithRetries } from '../../../../src/runtime/attempts/index.js';
import { createManualClock, type ManualClock, until } from '../../../helpers/clock.js';
import { type FakeChat, startFakeChat } from '../../../helpers/fake-chat.js';
import { type FakeModel, startFakeModel } from '../../../helpers/fake-model.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

/** A manual clock that notes every wait it is asked for. */
function recordingClock(): ManualClock & { readonly waits: number[] } {
  const clock = createManualClock();
  const waits: number[] = [];
  return Object.assign(clock, {
    waits,
    sleep: ((sleep) => (ms: number, signal?: AbortSignal) => {
      waits.push(ms);
      return sleep(ms, signal);
    })(clock.sleep),
  });
}

async function fakeModel(...args: Parameters<typeof startFakeModel>): Promise<FakeModel> {
  const model = await startFakeModel(...args);
  cleanups.push(() => model.close());
  return model;
}

async function fakeChat(): Promise<FakeChat> {
  const chat = await startFakeChat();
  cleanups.push(() => chat.close());
  return chat;
}

const routerTo = (baseUrl: string) =>
  createModelRouter({ models: { providers: { fake: { baseUrl, apiKey: 'sk-test-key', api: 'openai-chat' } } } });
const messages = [{ role: 'user' as const, content: 'hi' }];

describe('model tries (docs/runtime.md#attempts)', () => {
  it("retries a 429 after its Retry-After and a 5xx after the back-off, on the runtime's clock", async () => {
    const model = await fakeModel((_r, i) =>
      i === 0 ? { status: 429, retryAfter: 2 } : i === 1 ? { status: 503 } : 'third time',
    );
    const clock = recordingClock();
    const attempts: Attempt[] = [];
    const answer = completeWithRetries(
      routerTo(model.url),
      'fake/m',
      { messages, signal: new AbortController().signal },
      { clock, onFailure: (a) => attempts.push(a) },
    );
    await until(() => clock.waits.length === 1);
    expect(clock.waits).toEqual([2000]);
    expect(attempts).toEqual([
      { at: clock.now(), kind: 'model', n: 1, outcome: 'MODEL_REFUSED', status: 429, error: expect.any(String) },
    ]);
    await clock.advance(2000);
    await until(() => clock.waits.length === 2);
    expect(clock.waits).toEqual([2000, 500]);
    await clock.advance(500);
    await expect(answer).resolves.toBe('third time');
    expect(attempts.map((a) => [a.n, a.status])).toEqual([
      [1, 429],
      [2, 503],
    ]);
    expect(model.requests).toHaveLength(3);
  });

  it('backs off 0.25 s doubling up to 5 s while 5xx go on, and says the tries when the signal cuts it off', async () => {
    const model = await fakeModel(() => ({ status: 500 }));
    const clock = recordingClock();
    const stop = new AbortController();
    const answer = completeWithRetries(routerTo(model.url), 'fake/m', { messages, signal: stop.signal }, { clock });
    for (const [n, delayMs] of [250, 500, 1000, 2000, 4000, 5000, 5000].entries()) {
      await until(() => clock.waits.length === n + 1);
      expect(clock.waits[n]).toBe(delayMs);
      if (n < 6) await clock.advance(delayMs);
    }
    stop.abort(new Error('time is up'));
    const failure = await answer.catch((err: unknown) => err);
    expect(isHookdError(failure, 'MODEL_UNAVAILABLE')).toBe(true);
    expect((failure as Error).message).toBe(
      'the model server failed 7 times, last: HTTP 500 {"error":{"message":"fake error"}}',
    );
    expect(model.requests).toHaveLength(7);
  });

  it('records each refused connection while nothing listens', async () => {
    const clock = recordingClock();
    const attempts: Attempt[] = [];
    const stop = new AbortController();
    const answer = completeWithRetries(
      routerTo('http://127.0.0.1:9/v1'),
      'fake/m',
      { messages, signal: stop.signal },
      { clock, onFailure: (a) => attempts.push(a) },
    ).catch((err: unknown) => err);
    await until(() => clock.waits.length === 1);
    await clock.advance(250);
    await until(() => attempts.length === 2);
    expect(attempts[1]).toMatchObject({ kind: 'model', n: 2, outcome: 'MODEL_UNREACHABLE' });
    expect(attempts[1]?.error).toMatch(/ECONNREFUSED/);
    expect(attempts[1]).not.toHaveProperty('status');
    stop.abort();
    expect(((await answer) as Error).message).toMatch(/^the model server failed 2 times, last: .*ECONNREFUSED/);
  });

  it('fails at once, after one recorded try, on a refusal a retry cannot mend', async () => {
    const model = await fakeModel(() => ({ status: 401, body: { error: { message: 'bad key sk-test-key' } } }));
    const attempts: Attempt[] = [];
    const failure = await completeWithRetries(
      routerTo(model.url),
      'fake/m',
      { messages, signal: new AbortController().signal },
      { clock: createManualClock(), onFailure: (a) => attempts.push(a) },
    ).catch((err: unknown) => err);
    expect(isHookdError(failure, 'MODEL_REFUSED')).toBe(true);
    expect(attempts).toEqual([
      {
        at: expect.any(Number),
        kind: 'model',
        n: 1,
        outcome: 'MODEL_REFUSED',
        status: 401,
        error: '{"error":{"message":"bad key [REDACTED]"}}',
      },
    ]);
    expect(model.requests).toHaveLength(1);
  });
});

describe('delivery tries (docs/runtime.md#attempts)', () => {
  const send = (chat: { url: string }, clock: ManualClock, attempts: Attempt[], text = 'hello') =>
    sendWithRetries(createChatnetChannel({ apiBase: chat.url, botToken: 'bot-token' }), '42', text, {
      clock,
      onFailure: (a) => attempts.push(a),
    });

  it('waits retry_after seconds on a 429, at most 60 s, then sends', async () => {
    const chat = await fakeChat();
    chat.throttleNext(2, 3600);
    const clock = recordingClock();
    const attempts: Attempt[] = [];
    const sending = send(chat, clock, attempts);
    await until(() => clock.waits.length === 1);
    expect(clock.waits).toEqual([60_000]);
    await clock.advance(60_000);
    await until(() => clock.waits.length === 2);
    await clock.advance(60_000);
    await sending;
    expect(chat.sent).toHaveLength(1);
    expect(attempts.map((a) => [a.kind, a.n, a.outcome, a.status])).toEqual([
      ['delivery', 1, 'CHANNEL_REFUSED', 429],
      ['delivery', 2, 'CHANNEL_REFUSED', 429],
    ]);
  });

  it('retries an unreachable service after 0.5, 1 and 2 s, then gives up after four attempts', async () => {
    const chat = await fakeChat();
    const gone = { url: chat.url };
    await chat.close();
    const clock = recordingClock();
    const attempts: Attempt[] = [];
    const sending = send(gone, clock, attempts).catch((err: unknown) => err);
    for (const [n, delayMs] of [500, 1000, 2000].entries()) {
      await until(() => clock.waits.length === n + 1);
      expect(clock.waits[n]).toBe(delayMs);
      await clock.advance(delayMs);
    }
    const failure = (await sending) as Error;
    expect(failure.message).toMatch(/^chatnet unreachable: .* \(after 4 attempts\)$/);
    expect(clock.waits).toHaveLength(3);
    expect(attempts.map((a) => a.n)).toEqual([1, 2, 3, 4]);
    expect(attempts.every((a) => a.outcome === 'CHANNEL_UNREACHABLE' && !a.error?.includes('bot-token'))).toBe(true);
  });

  it('counts a service that does not answer in 15 s as a failed try', async () => {
    const { createServer } = await import('node:http');
    const silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    cleanups.push(async () => {
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    });
    const { port } = silent.address() as { port: number };
    const clock = recordingClock();
    const attempts: Attempt[] = [];
    const stop = new AbortController();
    const sending = sendWithRetries(
      createChatnetChannel({ apiBase: `http://127.0.0.1:${port}`, botToken: 'b' }),
      '42',
      'hello',
      { clock, signal: stop.signal, onFailure: (a) => attempts.push(a) },
    ).catch((err: unknown) => err);
    await until(() => clock.pending > 0);
    await clock.advance(15_000);
    await until(() => attempts.length === 1);
    expect(attempts[0]).toMatchObject({ n: 1, outcome: 'CHANNEL_UNREACHABLE', error: 'no answer in 15 s' });
    stop.abort();
    expect(((await sending) as Error).message).toBe('delivery aborted: shutting down');
  });

  it('records two failed attempts for a delivery that fails twice, then goes through', async () => {
    const chat = await fakeChat();
    chat.failNext(2);
    const clock = recordingClock();
    const attempts: Attempt[] = [];
    const sending = send(chat, clock, attempts);
    await until(() => clock.waits.length === 1);
    await clock.advance(500);
    await until(() => clock.waits.length === 2);
    await clock.advance(1000);
    await sending;
    expect(chat.sent.map((m) => m.text)).toEqual(['hello']);
    expect(attempts.map((a) => [a.n, a.outcome, a.status, a.error])).toEqual([
      [1, 'CHANNEL_REFUSED', 502, 'Bad Gateway'],
      [2, 'CHANNEL_REFUSED', 502, 'Bad Gateway'],
    ]);
  });
});
