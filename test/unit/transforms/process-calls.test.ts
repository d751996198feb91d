import { describe, expect, it } from 'vitest';
import { hookdError, isHookdError } from '../../../src/errors.js';
import { GRACE_MS, MAX_WAITING, type ProcessCall, ProcessCalls } from '../../../src/transforms/process-calls.js';
import { transformContext } from '../../helpers/transforms.js';

/**
 * The gateway's books of its transform process's calls (src/transforms/process-calls.ts), with
 * the process played by the test: which calls go to it, which wait, and whom an overdue call blames.
 */
function books(window = 2) {
  const sent: { call: ProcessCall; budgetMs: number }[] = [];
  const overdue: { call: string; holder: string }[] = [];
  const calls = new ProcessCalls({
    window,
    retryAfterS: 1,
    up: () => true,
    send: (call, budgetMs) => {
      sent.push({ call, budgetMs });
      return true;
    },
    overdue: (call, holder) => {
      overdue.push({ call: call.key, holder: holder.key });
      call.reject(hookdError('TRANSFORM_FAILED', { reason: 'no answer' }));
    },
    settled: () => undefined,
  });
  const answer = (id: number, value: unknown = 'ok') => calls.settle(id)?.resolve(value);
  return { calls, sent, overdue, answer };
}

const context = transformContext({});
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("a mapping's window of calls in the transform process", () => {
  it('sends at most `window` calls of a mapping at once; the next goes as one is answered', async () => {
    const { calls, sent, answer } = books(2);
    const results = ['a', 'a', 'a', 'b'].map((key) => calls.add(key, context, 60_000));
    expect(sent.map((s) => s.call.key)).toEqual(['a', 'a', 'b']);
    answer(sent[0]?.call.id as number);
    expect(sent.map((s) => s.call.key)).toEqual(['a', 'a', 'b', 'a']);
    for (const s of sent.slice(1)) answer(s.call.id);
    await expect(Promise.all(results)).resolves.toEqual(['ok', 'ok', 'ok', 'ok']);
  });

  it("does not count a call's wait for its window against its time", async () => {
    const { calls, sent, answer } = books(1);
    void calls.add('a', context, 60_000);
    const later = calls.add('a', context, 400 + GRACE_MS).catch((e: unknown) => e);
    await sleep(600);
    answer(sent[0]?.call.id as number);
    // It waited 600 ms of its 400: it is sent with (about) the whole of them, not failed.
    expect(sent[1]?.budgetMs).toBeGreaterThan(300);
    answer(sent[1]?.call.id as number);
    await expect(later).resolves.toBe('ok');
  });

  it(`answers TRANSFORM_BUSY at once past ${MAX_WAITING} calls waiting, with a Retry-After`, async () => {
    const { calls } = books(1);
    const held = Array.from({ length: MAX_WAITING + 1 }, () => calls.add('a', context, 60_000).catch(() => 'failed'));
    const err = await calls.add('a', context, 60_000).catch((e: unknown) => e);
    expect(isHookdError(err, 'TRANSFORM_BUSY') && err.headers).toEqual({ 'retry-after': '1' });
    // Another mapping's calls are not held back by it.
    const other = calls.add('b', context, 60_000).catch(() => 'failed');
    calls.fail(false, 'done');
    calls.fail(true, 'done');
    expect(new Set(await Promise.all([...held, other]))).toEqual(new Set(['failed']));
  });
});

describe('a call that gets no answer', () => {
  it('blames the oldest call on the loop the process has not answered and sent a while ago, else itself', async () => {
    const { calls, sent, overdue } = books(4);
    const failed = () => undefined;
    const first = calls.add('offLoop', context, GRACE_MS + 100).catch(failed);
    calls.markOffLoop(sent[0]?.call.id as number);
    await sleep(500);
    const onLoop = calls.add('onLoop', context, 60_000).catch(failed);
    await first;
    // Sent 600 ms before: too short a while to have kept an answer past its grace.
    expect(overdue).toEqual([{ call: 'offLoop', holder: 'offLoop' }]);
    const second = calls.add('offLoop', context, GRACE_MS + 100).catch(failed);
    calls.markOffLoop(sent[2]?.call.id as number);
    await second;
    expect(overdue.at(-1)).toEqual({ call: 'offLoop', holder: 'onLoop' });
    calls.fail(true, 'done');
    await onLoop;
  });

  it('blames a call that left the loop and is back on it, as one that never left', async () => {
    const { calls, sent, overdue } = books(4);
    const failed = () => undefined;
    const back = calls.add('back', context, 60_000).catch(failed);
    calls.markOffLoop(sent[0]?.call.id as number);
    calls.markOffLoop(sent[0]?.call.id as number, false);
    await calls.add('late', context, GRACE_MS + 100).catch(failed);
    expect(overdue).toEqual([{ call: 'late', holder: 'back' }]);
    calls.fail(true, 'done');
    await back;
  });
});
