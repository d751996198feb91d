import { describe, expect, it } from 'vitest';
import { hookdError } from '../../../../src/errors.js';
import { watchedChannels, watchedModels } from '../../../../src/runtime/alerts/watched-ports.js';
import type { ChatChannel, ModelRouter } from '../../../../src/runtime/index.js';
import { deadline } from '../../../../src/runtime/timeout.js';
import { createManualClock } from '../../../helpers/clock.js';

/** What a watched model port reports to alerts (docs/operations.md#alerts). */

const router = (outcome: () => Promise<string>): ModelRouter => ({ complete: () => outcome() });

async function reported(outcome: () => Promise<string>, signal = new AbortController().signal) {
  const seen: string[] = [];
  const models = watchedModels(router(outcome), {
    succeeded: (ref) => seen.push(`ok ${ref}`),
    failed: (ref, error) => seen.push(`failed ${ref}: ${error}`),
  });
  await models.complete('fake/m', { messages: [], signal }).catch(() => undefined);
  return seen;
}

describe('a watched model port', () => {
  it('reports a success, and a failure by its code and status, never the answer it quotes', async () => {
    expect(await reported(async () => 'hi')).toEqual(['ok fake/m']);
    const refused = hookdError('MODEL_REFUSED', { status: 500, excerpt: 'you sent: card 4242' });
    expect(await reported(async () => Promise.reject(refused))).toEqual(['failed fake/m: MODEL_REFUSED (HTTP 500)']);
    const unreachable = hookdError('MODEL_UNREACHABLE', { reason: 'connect ECONNREFUSED 127.0.0.1:9' });
    expect(await reported(async () => Promise.reject(unreachable))).toEqual([
      'failed fake/m: MODEL_UNREACHABLE: connect ECONNREFUSED 127.0.0.1:9',
    ]);
  });

  it('reports neither a refusal of the request size nor a try cut off', async () => {
    const tooLong = hookdError('MODEL_CONTEXT_EXCEEDED', { status: 400, excerpt: 'context_length_exceeded' });
    expect(await reported(async () => Promise.reject(tooLong))).toEqual([]);
    const cut = new AbortController();
    cut.abort();
    expect(await reported(async () => Promise.reject(new Error('aborted')), cut.signal)).toEqual([]);
  });

  it('reports a try its time limit cut after half of it or more as unanswered, and one cut sooner as nothing', async () => {
    for (const [triedMs, expected] of [
      [60_000, ['failed fake/m: MODEL_UNREACHABLE: no answer in 60 s']],
      [20_000, []],
    ] as const) {
      const clock = createManualClock();
      const seen: string[] = [];
      const models = watchedModels(
        {
          complete: (_ref, request) =>
            new Promise((_resolve, reject) =>
              request.signal.addEventListener('abort', () => reject(request.signal.reason)),
            ),
        },
        { succeeded: () => undefined, failed: (ref, error) => seen.push(`failed ${ref}: ${error}`) },
        clock,
      );
      // The run's limit: 60 s, of which the try got `triedMs` (the rest went on waiting for a slot).
      const limit = deadline(60, new AbortController().signal, clock);
      await clock.advance(60_000 - triedMs);
      const call = models.complete('fake/m', { messages: [], signal: limit.signal }).catch(() => undefined);
      await clock.advance(triedMs);
      await call;
      expect(seen, `${triedMs} ms`).toEqual(expected);
    }
  });
});

describe('a watched channel', () => {
  it('reports a try its own time limit cut as unanswered, and not one the shutdown cut', async () => {
    const seen: string[] = [];
    const hanging: ChatChannel = {
      id: 'ops',
      split: (text) => [text],
      sendMessage: (_to, _text, signal) =>
        new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
    };
    const channel = watchedChannels(new Map([['ops', hanging]]), (id, error) => seen.push(`${id}: ${error}`)).get(
      'ops',
    );
    const clock = createManualClock();
    const shutdown = new AbortController();
    const timedOut = channel
      ?.sendMessage('x', 'hi', deadline(15, shutdown.signal, clock).signal)
      .catch(() => undefined);
    await clock.advance(15_000);
    await timedOut;
    expect(seen).toEqual(['ops: CHANNEL_UNREACHABLE: no answer in 15 s']);
    const cut = channel?.sendMessage('x', 'hi', deadline(15, shutdown.signal, clock).signal).catch(() => undefined);
    shutdown.abort(hookdError('SHUTTING_DOWN'));
    await cut;
    expect(seen).toHaveLength(1);
  });
});
