import { afterEach, describe, expect, it } from 'vitest';
import { startFakeAnthropic } from '../helpers/fake-anthropic.js';
import { startFakeService } from '../helpers/fake-service.js';
import { startHookd } from '../helpers/hookd-process.js';
import { call, until } from '../helpers/http.js';

/** A provider API end to end (docs/runtime.md#providers): the real `hookd serve` on Anthropic's Messages API. */

const HOOK_TOKEN = 'providers-hook-token-0123456789';
const API_KEY = 'sk-ant-e2e-secret-0123456789';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of cleanups.splice(0).reverse()) await close();
});

describe('an anthropic-messages provider end to end', () => {
  it('runs an agent turn with a thinking budget and delivers only the text of the reply', async () => {
    const api = await startFakeAnthropic(() => ({
      blocks: [
        { type: 'thinking', thinking: 'private reasoning' },
        { type: 'text', text: 'The build is green.' },
      ],
    }));
    cleanups.push(() => api.close());
    const chat = await startFakeService(() => ({ status: 200, body: { ok: true } }));
    cleanups.push(() => chat.close());
    const hookd = await startHookd({
      config: {
        hooks: { enabled: true, token: HOOK_TOKEN },
        models: {
          providers: { claude: { api: 'anthropic-messages', baseUrl: api.url, apiKey: API_KEY, maxTokens: 1000 } },
        },
        agents: { defaults: { model: 'claude/claude-test', thinking: 'medium', heartbeat: { every: 0 } } },
        channels: { chatnet: { apiBase: chat.url, botToken: 'bot-e2e-token-0123', defaultTo: '42' } },
      },
    });
    cleanups.push(() => hookd.stop());
    const accepted = await call(`${hookd.url}/hooks/agent`, {
      headers: { authorization: `Bearer ${HOOK_TOKEN}` },
      json: { message: 'How is the build?' },
    });
    expect(accepted.status).toBe(202);
    const sent = await until(async () => chat.requests[0], 'the delivery', 20_000);
    expect(JSON.parse(sent.body)).toEqual({ chat_id: '42', text: 'The build is green.' });
    expect(api.requests[0]).toMatchObject({
      model: 'claude-test',
      max_tokens: 5096,
      thinking: { type: 'enabled', budget_tokens: 4096 },
      headers: { 'x-api-key': API_KEY, 'anthropic-version': '2023-06-01' },
    });
    expect(hookd.stdout() + hookd.stderr()).not.toContain(API_KEY);
  });
});
