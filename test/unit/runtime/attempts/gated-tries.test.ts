import { afterEach, describe, expect, it } from 'vitest';
import { createChatnetChannel } from '../../../../src/channels/index.js';
import { createModelRouter } from '../../../../src/providers/index.js';
import {
  type Attempt,
  completeWithRetries,
  sendWithRetries,
  type TryGate,
} from '../../../../src/runtime/attempts/index.js';
import { BREAKER_FAILURES } from '../../../../src/runtime/isolation/breaker.js';
import { createTrySlots, modelTarget, type Permit } from '../../../../src/runtime/isolation/index.js';
import { deadline } from '../../../../src/runtime/timeout.js';
import { createManualClock, until } from '../../../helpers/clock.js';
import { startFakeChat } from '../../../helpers/fake-chat.js';
import { startFakeModel } from '../../../helpers/fake-model.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const messages = [{ role: 'user' as const, content: 'hi' }];

function slotsOf(runSlots: number) {
  const clock = createManualClock();
  const slots = createTrySlots({ runSlots, limits: { provider: () => 4, channel: () => 4 }, clock });
  const gate = (source: string): TryGate => ({
    acquire: (target, signal) => slots.acquire({ source, target, runSlot: true }, signal),
  });
  return { clock, slots, gate };
}

/** A model server that never answers, and a router to it (`fake/m`). */
async function stalledModel() {
  const model = await startFakeModel(() => ({ stall: true }));
  cleanups.push(() => model.close());
  const router = createModelRouter({ models: { providers: { fake: { baseUrl: model.url, api: 'openai-chat' } } } });
  return { model, router };
}

describe('tries through the slots (docs/runtime.md#fault-isolation)', () => {
  it('frees its slot while a model call waits out its back-off, and takes one again for the next try', async () => {
    const model = await startFakeModel((_r, i) => (i === 0 ? { status: 500 } : 'second time'));
    cleanups.push(() => model.close());
    const router = createModelRouter({ models: { providers: { fake: { baseUrl: model.url, api: 'openai-chat' } } } });
    const { clock, slots, gate } = slotsOf(1);
    const attempts: Attempt[] = [];
    const answer = completeWithRetries(
      router,
      'fake/m',
      { messages, signal: new AbortController().signal },
      { clock, gate: gate('a'), onFailure: (a) => attempts.push(a) },
    );
    await until(() => attempts.length === 1);
    // The one run slot is free during the 250 ms back-off: another source's try takes it.
    const other: Permit[] = [];
    slots.enqueue({ source: 'b', target: modelTarget('other/x'), runSlot: true }, (p) => other.push(p));
    expect(other).toHaveLength(1);
    await clock.advance(250);
    // The retry waits for the slot now held by the other try.
    expect(model.requests).toHaveLength(1);
    other[0]?.release('ok');
    await expect(answer).resolves.toBe('second time');
    expect(model.requests).toHaveLength(2);
  });

  it("counts a try left unanswered until its call's time limit as failed: a server that never answers opens its breaker", async () => {
    const { model, router } = await stalledModel();
    const { clock, slots, gate } = slotsOf(1);
    const attempts: Attempt[] = [];
    for (let i = 0; i < BREAKER_FAILURES; i++) {
      const limit = deadline(2, new AbortController().signal, clock);
      const call = completeWithRetries(
        router,
        'fake/m',
        { messages, signal: limit.signal },
        { clock, gate: gate('a'), onFailure: (a) => attempts.push(a) },
      ).catch((err: unknown) => err as Error);
      await until(() => model.requests.length === i + 1);
      await clock.advance(2000);
      expect(((await call) as Error).message).toBe('the model server failed 1 time, last: no answer in 2 s');
      limit.done();
    }
    expect(attempts.map((a) => [a.outcome, a.error])).toEqual(
      Array.from({ length: BREAKER_FAILURES }, () => ['MODEL_UNREACHABLE', 'no answer in 2 s']),
    );
    expect(slots.breakers()).toEqual([
      expect.objectContaining({ kind: 'model', state: 'open', lastError: 'MODEL_UNREACHABLE: no answer in 2 s' }),
    ]);
  });

  it('says nothing of the server when a shutdown cuts a try', async () => {
    const { model, router } = await stalledModel();
    const { clock, slots, gate } = slotsOf(1);
    const attempts: Attempt[] = [];
    const shutdown = new AbortController();
    const call = completeWithRetries(
      router,
      'fake/m',
      { messages, signal: deadline(2, shutdown.signal, clock).signal },
      { clock, gate: gate('a'), onFailure: (a) => attempts.push(a) },
    ).catch((err: unknown) => err as Error);
    await until(() => model.requests.length === 1);
    await clock.advance(1500);
    shutdown.abort(new Error('shutting down'));
    expect(((await call) as Error).message).toBe('shutting down');
    expect(attempts).toEqual([]);
    expect(slots.breakers().filter((b) => b.failures > 0)).toEqual([]);
  });

  it("waits for a channel's open breaker without spending a try, and goes through on its probe", async () => {
    const chat = await startFakeChat();
    cleanups.push(() => chat.close());
    const channel = createChatnetChannel({ apiBase: chat.url, botToken: '123:secret' });
    const { clock, slots, gate } = slotsOf(4);
    chat.failNext(5);
    const first: Attempt[] = [];
    const second: Attempt[] = [];
    const signal = new AbortController().signal;
    const one = sendWithRetries(channel, '42', 'one', {
      clock,
      gate: gate('a'),
      signal,
      onFailure: (a) => first.push(a),
    });
    const gaveUp = expect(one).rejects.toMatchObject({ code: 'DELIVERY_GAVE_UP' });
    // 0.5, 1 and 2 s between its four tries.
    for (const [n, ms] of [500, 1000, 2000].entries()) {
      await until(() => first.length === n + 1);
      await clock.advance(ms);
    }
    await gaveUp;
    const two = sendWithRetries(channel, '42', 'two', {
      clock,
      gate: gate('b'),
      signal,
      onFailure: (a) => second.push(a),
    });
    await until(() => second.length === 1);
    expect(slots.breakerOf({ kind: 'channel', id: 'chatnet' })).toMatchObject({ state: 'open', failures: 5 });
    // Its back-off is over; the breaker holds it, and no try is spent on it.
    await clock.advance(29_000);
    expect(second).toHaveLength(1);
    expect(chat.sent).toEqual([]);
    await clock.advance(1_000);
    await expect(two).resolves.toBeUndefined();
    expect(chat.sent.map((m) => m.text)).toEqual(['two']);
    expect(slots.breakerOf({ kind: 'channel', id: 'chatnet' })).toMatchObject({ state: 'closed', failures: 0 });
  });
});
