import { describe, expect, it } from 'vitest';
import { hookdError } from '../../../../src/errors.js';
import { watchedModels } from '../../../../src/runtime/alerts/watched-ports.js';
import type { ModelRouter } from '../../../../src/runtime/index.js';

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
});
