import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../../src/config/index.js';
import { startGateway } from '../../../../src/main.js';
import type { RunView } from '../../../../src/views.js';
import { createManualClock, type ManualClock } from '../../../helpers/clock.js';
import { type FakeChat, startFakeChat } from '../../../helpers/fake-chat.js';
import { CONTEXT_REFUSAL, type FakeModel, type FakeReply, startFakeModel } from '../../../helpers/fake-model.js';
import { makeTempDir } from '../../../helpers/hookd-process.js';
import { call, until } from '../../../helpers/http.js';

/**
 * Runs show their attempts while they happen: a gateway in this process on a
 * manual clock, its model and chat service real servers on port 0, read through the admin API.
 */

const HOOK_TOKEN = 'attempts-hook-token-0123456789';
const GATEWAY_TOKEN = 'attempts-gateway-token-0123456789';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

interface World {
  readonly clock: ManualClock;
  readonly chat: FakeChat;
  /** The warn lines the gateway logged. */
  readonly warnings: Record<string, unknown>[];
  /** Posts to `/hooks/deploy` (the `deploys` mapping); resolves with the run's id. */
  deploy(extra?: object): Promise<string>;
  run(runId: string): Promise<RunView>;
  /** `POST /api/runs/:id/redeliver`. */
  redeliver(runId: string): Promise<unknown>;
  /** Polls the run until `done` holds. */
  runWhen(runId: string, done: (run: RunView) => boolean, what: string): Promise<RunView>;
}

async function world(modelUrl: string): Promise<World> {
  const chat = await startFakeChat();
  cleanups.push(() => chat.close());
  const clock = createManualClock();
  const data = makeTempDir();
  cleanups.push(async () => data.cleanup());
  const warnings: Record<string, unknown>[] = [];
  const log = pino({ level: 'warn' }, { write: (line: string) => warnings.push(JSON.parse(line)) });
  const config = loadConfig({
    data: {
      server: { host: '127.0.0.1', port: 0 },
      storage: { path: join(data.dir, 'hookd.db') },
      gateway: { auth: { token: GATEWAY_TOKEN } },
      hooks: {
        enabled: true,
        token: HOOK_TOKEN,
        mappings: [{ id: 'deploys', match: { path: 'deploy' }, messageTemplate: 'deploy {{app}}' }],
      },
      agents: { defaults: { model: 'fake/m', heartbeat: { every: '0' } } },
      models: { providers: { fake: { baseUrl: modelUrl, apiKey: 'sk-attempts', api: 'openai-chat' } } },
      channels: { chatnet: { apiBase: chat.url, botToken: 'bot-attempts', defaultTo: '42' } },
    },
    env: {},
  });
  const gateway = await startGateway(config, log, { clock, mailWatch: false });
  cleanups.push(() => gateway.close());
  const run = async (runId: string) =>
    (
      await call(`${gateway.url}/api/runs/${runId}`, {
        method: 'GET',
        headers: { authorization: `Bearer ${GATEWAY_TOKEN}` },
      })
    ).body as unknown as RunView;
  return {
    clock,
    chat,
    warnings,
    async deploy(extra = {}) {
      const answer = await call(`${gateway.url}/hooks/deploy`, {
        headers: { authorization: `Bearer ${HOOK_TOKEN}` },
        json: { app: 'shop', ...extra },
      });
      expect(answer.status).toBe(202);
      return answer.body.runId as string;
    },
    run,
    redeliver: async (runId) =>
      (
        await call(`${gateway.url}/api/runs/${runId}/redeliver`, {
          headers: { authorization: `Bearer ${GATEWAY_TOKEN}` },
        })
      ).body,
    runWhen: (runId, done, what) =>
      until(async () => {
        const view = await run(runId);
        return done(view) ? view : undefined;
      }, what),
  };
}

async function fakeModel(responder: () => FakeReply): Promise<FakeModel> {
  const model = await startFakeModel(responder);
  cleanups.push(() => model.close());
  return model;
}

describe('a run against a failing model', () => {
  it('shows its failed tries through the admin API while it is still running, and logs each at warn', async () => {
    const model = await fakeModel(() => ({ status: 500, body: { error: { message: 'overloaded, key sk-attempts' } } }));
    const { clock, deploy, runWhen, warnings } = await world(model.url);
    const runId = await deploy();
    await runWhen(runId, (r) => r.attempts.length === 1, 'the first failed try');
    await clock.advance(250);
    const run = await runWhen(runId, (r) => r.attempts.length === 2, 'the second failed try');
    expect(run.status).toBe('running');
    const excerpt = '{"error":{"message":"overloaded, key [REDACTED]"}}';
    expect(run.attempts).toEqual([
      {
        at: new Date(clock.now() - 250).toISOString(),
        kind: 'model',
        n: 1,
        outcome: 'MODEL_REFUSED',
        status: 500,
        error: excerpt,
      },
      {
        at: new Date(clock.now()).toISOString(),
        kind: 'model',
        n: 2,
        outcome: 'MODEL_REFUSED',
        status: 500,
        error: excerpt,
      },
    ]);
    expect(run.retrying).toBe(`retrying (attempt 3, last: HTTP 500 ${excerpt})`);
    const logged = warnings.filter((w) => w.msg === 'model attempt failed');
    // Each line names the model its try called: an operator reads which destination fails.
    expect(logged.map((w) => [w.runId, w.mapping, w.model, w.n, w.status])).toEqual([
      [runId, 'deploys', 'fake/m', 1, 500],
      [runId, 'deploys', 'fake/m', 2, 500],
    ]);
    expect(JSON.stringify(warnings)).not.toContain('sk-attempts');
  });

  it('shows each refused connection while no model server listens', async () => {
    const { clock, deploy, runWhen } = await world('http://127.0.0.1:9/v1');
    const runId = await deploy();
    await runWhen(runId, (r) => r.attempts.length === 1, 'the first failed try');
    await clock.advance(250);
    const run = await runWhen(runId, (r) => r.attempts.length === 2, 'the second failed try');
    expect(run.status).toBe('running');
    expect(run.attempts[1]).toMatchObject({ kind: 'model', n: 2, outcome: 'MODEL_UNREACHABLE' });
    expect(run.attempts[1]).not.toHaveProperty('status');
    expect(run.retrying).toMatch(/^retrying \(attempt 3, last: connect ECONNREFUSED 127\.0\.0\.1:9\)$/);
  });

  it('ends at once, untried again, when the model refuses the request as too long for its context', async () => {
    const model = await fakeModel(() => ({ status: 400, body: CONTEXT_REFUSAL }));
    const { deploy, runWhen } = await world(model.url);
    const runId = await deploy();
    // No clock time passes: a retry would wait on it, so the run ends on the first answer alone.
    const run = await runWhen(runId, (r) => r.status !== 'running' && r.status !== 'queued', 'the run to end');
    expect(run.status).toBe('error');
    expect(run.error).toMatch(
      /^the model server refused the request as too long for its context \(HTTP 400, \d+ characters sent\): .*context_length_exceeded/,
    );
    expect(run.attempts).toEqual([
      expect.objectContaining({ kind: 'model', n: 1, outcome: 'MODEL_CONTEXT_EXCEEDED', status: 400 }),
    ]);
    expect(run).not.toHaveProperty('retrying');
    expect(model.requests).toHaveLength(1);
  });
});

describe("a run's delivery", () => {
  it('shows two delivery attempts when the chat service fails twice, then takes the reply', async () => {
    const model = await fakeModel(() => 'the reply');
    const { clock, chat, deploy, runWhen, warnings } = await world(model.url);
    chat.failNext(2);
    const runId = await deploy({ deliver: true });
    let run = await runWhen(runId, (r) => r.attempts.length === 1, 'the first failed delivery');
    expect(run.retrying).toBe('retrying delivery (attempt 2, last: HTTP 502 Bad Gateway)');
    await clock.advance(500);
    await runWhen(runId, (r) => r.attempts.length === 2, 'the second failed delivery');
    await clock.advance(1000);
    run = await runWhen(runId, (r) => r.delivery !== undefined, 'the delivery');
    expect(run.delivery).toEqual({ status: 'sent', channel: 'chatnet', to: '42' });
    expect(run.attempts.map((a) => [a.kind, a.n, a.outcome, a.status, a.error])).toEqual([
      ['delivery', 1, 'CHANNEL_REFUSED', 502, 'Bad Gateway'],
      ['delivery', 2, 'CHANNEL_REFUSED', 502, 'Bad Gateway'],
    ]);
    expect(chat.sent.map((m) => m.text)).toEqual(['the reply']);
    const logged = warnings.filter((w) => w.msg === 'delivery attempt failed');
    expect(logged.map((w) => [w.runId, w.channel, w.n])).toEqual([
      [runId, 'chatnet', 1],
      [runId, 'chatnet', 2],
    ]);
  });

  it("adds a redelivery's failed attempts to the run's", async () => {
    const model = await fakeModel(() => 'the reply');
    const { clock, chat, deploy, runWhen, redeliver } = await world(model.url);
    chat.refuseNext(1);
    const runId = await deploy({ deliver: true });
    const failed = await runWhen(runId, (r) => r.delivery !== undefined, 'the delivery');
    expect(failed.delivery?.status).toBe('failed');
    expect(failed.attempts.map((a) => [a.kind, a.n, a.status])).toEqual([['delivery', 1, 400]]);
    chat.failNext(1);
    const answer = redeliver(runId);
    await runWhen(runId, (r) => r.attempts.length === 2, 'the failed redelivery try');
    await clock.advance(500);
    expect(await answer).toEqual({ runId, delivery: { status: 'sent', channel: 'chatnet', to: '42' } });
    const run = await runWhen(runId, (r) => r.delivery?.status === 'sent', 'the redelivery recorded');
    expect(run.attempts.map((a) => [a.kind, a.n, a.outcome, a.status])).toEqual([
      ['delivery', 1, 'CHANNEL_REFUSED', 400],
      ['delivery', 1, 'CHANNEL_REFUSED', 502],
    ]);
  });
});
