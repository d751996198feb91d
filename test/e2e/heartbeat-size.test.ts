import { afterEach, describe, expect, it } from 'vitest';
import { startFakeChat } from '../helpers/fake-chat.js';
import { charsOf, isHeartbeat, lastUser, startFakeModel } from '../helpers/fake-model.js';
import { startHookd } from '../helpers/hookd-process.js';
import { call } from '../helpers/http.js';

/**
 * The heartbeat never stalls on size: a spawned gateway on the real clock,
 * a model server that refuses requests over 600,000 characters as too long for its context.
 */

const HOOK_TOKEN = 'heartbeat-size-hook-token-0123456789';
const HOOK = { authorization: `Bearer ${HOOK_TOKEN}` };
const MODEL_CONTEXT_CHARS = 600_000;

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

describe('a heartbeat behind large events', () => {
  it('shows a `now` wake sent after three 250,000-character events to the model, and delivers its reply within 15 s', async () => {
    const WAKE = 'the front door opened at 03:12';
    const model = await startFakeModel(
      (request) => (isHeartbeat(request) && lastUser(request).includes(WAKE) ? `Heads up: ${WAKE}.` : 'HEARTBEAT_OK'),
      { maxContextChars: MODEL_CONTEXT_CHARS },
    );
    cleanups.push(() => model.close());
    const chat = await startFakeChat();
    cleanups.push(() => chat.close());
    const hookd = await startHookd({
      config: {
        gateway: { auth: { token: 'heartbeat-size-gateway-token-0123456789' } },
        hooks: { enabled: true, token: HOOK_TOKEN },
        agents: { defaults: { model: 'fake/m', heartbeat: { every: '0' } } },
        models: { providers: { fake: { baseUrl: model.url, api: 'openai-chat' } } },
        channels: { chatnet: { apiBase: chat.url, botToken: 'bot-size', defaultTo: '42' } },
      },
    });
    cleanups.push(() => hookd.stop());
    const started = Date.now();
    for (const letter of ['a', 'b', 'c']) {
      const big = await call(`${hookd.url}/hooks/wake`, {
        headers: HOOK,
        json: { text: letter.repeat(250_000), mode: 'next-heartbeat' },
      });
      expect(big.status).toBe(200);
    }
    expect((await call(`${hookd.url}/hooks/wake`, { headers: HOOK, json: { text: WAKE, mode: 'now' } })).status).toBe(
      200,
    );
    await expect
      .poll(() => chat.sent.map((m) => m.text), { timeout: 15_000, interval: 50 })
      .toEqual([`Heads up: ${WAKE}.`]);
    expect(Date.now() - started).toBeLessThan(15_000);
    // Every request stayed within the heartbeat's budget: none was refused.
    const sizes = model.requests.map(charsOf);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(200_000);
    expect(sizes.length).toBeGreaterThanOrEqual(4);
  });
});
