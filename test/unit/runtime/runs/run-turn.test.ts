import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { hookdError } from '../../../../src/errors.js';
import { createModelRouter } from '../../../../src/providers/index.js';
import { OPEN_GATE } from '../../../../src/runtime/attempts/gate.js';
import { createPromptBudgets } from '../../../../src/runtime/attempts/index.js';
import { callModel, runErrorOf, type TurnParts } from '../../../../src/runtime/runs/run-turn.js';
import type { RunRecord } from '../../../../src/store/index.js';
import { createStore, type Store, sqliteContract } from '../../../../src/store/sqlite/index.js';
import { createManualClock, type ManualClock } from '../../../helpers/clock.js';
import { type FakeModel, startFakeModel } from '../../../helpers/fake-model.js';

/** A run's model turn on its own (docs/runtime.md#agent-runs): what it returns, and the error it names. */

const log = pino({ level: 'silent' });

describe("a failed run's error", () => {
  const none = { timedOutAfter: undefined, waited: undefined, model: 'fake/m', sentChars: 0 };

  it("names a time-out's limit, the model server's last failure and what the run waited for", () => {
    const budgets = createPromptBudgets(log);
    const failed = hookdError('MODEL_UNAVAILABLE', { attempts: 3, last: 'HTTP 503' });
    const waited = 'breaker open for fake/m until 2027-01-01T00:00:00.000Z';
    expect(runErrorOf(failed, { ...none, timedOutAfter: 30, waited }, budgets)).toBe(
      `timed out after 30s (the model server failed 3 times, last: HTTP 503; ${waited})`,
    );
    expect(runErrorOf(new Error('aborted'), { ...none, timedOutAfter: 30, waited }, budgets)).toBe(
      `timed out after 30s (${waited})`,
    );
    expect(runErrorOf(new Error('aborted'), { ...none, timedOutAfter: 1.5 }, budgets)).toBe('timed out after 1.5s');
  });

  it("says how much a context-length refusal was sent, and halves the model's later requests", () => {
    const budgets = createPromptBudgets(log);
    const refused = hookdError('MODEL_CONTEXT_EXCEEDED', { status: 400, excerpt: 'maximum context length' });
    const error = runErrorOf(refused, { ...none, sentChars: 150_000 }, budgets);
    expect(error).toBe(
      'the model server refused the request as too long for its context (HTTP 400, 150000 characters sent): maximum context length',
    );
    expect(budgets.of('fake/m', 200_000)).toBe(75_000);
    expect(budgets.of('other/m', 200_000)).toBe(200_000);
  });

  it('is the message of any other failure, and teaches no budget', () => {
    const budgets = createPromptBudgets(log);
    expect(runErrorOf(new Error('socket hang up'), { ...none, sentChars: 150_000 }, budgets)).toBe('socket hang up');
    expect(budgets.of('fake/m', 200_000)).toBe(200_000);
  });
});

let model: FakeModel | undefined;
let store: Store | undefined;
afterEach(async () => {
  await model?.close();
  store?.close();
});

/** The turn's parts over an in-memory store holding run `r1` (limited to `timeoutSeconds`), against `fake`. */
function turnParts(
  fake: FakeModel,
  clock: ManualClock,
  timeoutSeconds = 30,
  sessionKey = 'hook:r1',
): { parts: TurnParts; run: RunRecord } {
  store = createStore({ path: ':memory:', synchronous: 'normal' });
  store.runs.insert({
    id: 'r1',
    sessionKey,
    message: 'hello',
    model: 'fake/m',
    wakeMode: 'next-heartbeat',
    deliver: false,
    channel: 'last',
    allowUnsafeExternalContent: true,
    contentSource: 'webhook',
    timeoutSeconds,
    createdAt: 1,
  });
  const models = createModelRouter({ models: { providers: { fake: { baseUrl: fake.url, api: 'openai-chat' } } } });
  const parts: TurnParts = {
    store: sqliteContract(store),
    models,
    log,
    clock,
    historyLimit: 100,
    maxPromptChars: 200_000,
    budgets: createPromptBudgets(log),
    recordAttempt: () => () => undefined,
    defaultTimeoutSeconds: 30,
    defaultThinking: undefined,
    onRunUpdate: undefined,
  };
  return { parts, run: store.runs.get('r1') as RunRecord };
}

describe("a run's model turn", () => {
  it('marks the run running, and returns it finished with the question and the reply it adds', async () => {
    model = await startFakeModel(() => 'hi');
    const clock = createManualClock();
    const { parts, run } = turnParts(model, clock);
    const turn = await callModel(parts, run, { signal: new AbortController().signal, gate: OPEN_GATE });
    expect(turn?.run).toMatchObject({ id: 'r1', status: 'ok', output: 'hi', startedAt: clock.now() });
    expect(turn?.messages).toEqual([
      { role: 'user', content: 'hello' },
      { role: 'assistant', content: 'hi' },
    ]);
    await expect.poll(() => store?.runs.get('r1')?.status).toBe('running');
  });

  it("sends its session's history, except for a run whose key hookd made for it (hook:<its id>)", async () => {
    model = await startFakeModel(() => 'hi');
    const sent: number[] = [];
    for (const sessionKey of ['hook:chat', 'hook:r1']) {
      const { parts, run } = turnParts(model, createManualClock(), 30, sessionKey);
      // A transcript no run of a made key can have: runs of one key run in arrival order.
      store?.messages.append(sessionKey, [{ role: 'user', content: 'earlier' }], null, 0);
      await callModel(parts, run, { signal: new AbortController().signal, gate: OPEN_GATE });
      sent.push(model.requests.at(-1)?.messages.length ?? 0);
      store?.close();
    }
    expect(sent).toEqual([2, 1]);
  });

  it('returns no turn when the run is stopped mid-call: it resumes as it was', async () => {
    model = await startFakeModel(() => ({ stall: true }));
    const { parts, run } = turnParts(model, createManualClock());
    const stop = new AbortController();
    const turn = callModel(parts, run, { signal: stop.signal, gate: OPEN_GATE });
    await expect.poll(() => model?.requests.length).toBe(1);
    stop.abort(hookdError('SHUTTING_DOWN'));
    expect(await turn).toBeUndefined();
  });

  it('ends a run out of time as timeout, naming what it waited for, with nothing for its transcript', async () => {
    model = await startFakeModel(() => ({ stall: true }));
    const clock = createManualClock();
    const { parts, run } = turnParts(model, clock, 2);
    const context = { signal: new AbortController().signal, gate: OPEN_GATE, waiting: () => 'waiting for a slot' };
    const turn = callModel(parts, run, context);
    await expect.poll(() => model?.requests.length).toBe(1);
    await clock.advance(2000);
    expect(await turn).toEqual({
      run: expect.objectContaining({
        status: 'timeout',
        error: 'timed out after 2s (the model server failed 1 time, last: no answer in 2 s; waiting for a slot)',
      }),
      messages: [],
    });
  });
});
