import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunView } from '../../src/views.js';
import { type FakeChat, startFakeChat } from '../helpers/fake-chat.js';
import { isHeartbeat, startFakeModel } from '../helpers/fake-model.js';
import { startHookd } from '../helpers/hookd-process.js';
import { call, until } from '../helpers/http.js';

/**
 * One broken destination never stalls the others (docs/runtime.md#fault-isolation), measured as
 * the fault-isolation contract asks: `maxConcurrentRuns` 4, twenty runs of one mapping on a model that refuses
 * connections, then one run of another mapping on a healthy model; its reply is delivered
 * within 2 s. The same with a channel that answers 503 to the first mapping's deliveries.
 */

const TOKEN = 'isolation-hook-token-0123456789';
const GATEWAY = 'isolation-gateway-token-0123456789';
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

/**
 * A model server that refuses connections: nothing listens on the discard port of loopback (a
 * port freed by a test could be taken by another test's server meanwhile).
 */
const REFUSED = 'http://127.0.0.1:9/v1';

async function fakeChat(): Promise<FakeChat> {
  const chat = await startFakeChat();
  cleanups.push(() => chat.close());
  return chat;
}

describe('a model that refuses connections (spawned gateway)', () => {
  it("delays another mapping's reply by under 2 s, and shows its breaker in /healthz, /metrics and the runs", async () => {
    const model = await startFakeModel((r) => (isHeartbeat(r) ? 'HEARTBEAT_OK' : 'the healthy reply'));
    cleanups.push(() => model.close());
    const chat = await fakeChat();
    const agent = { action: 'agent', wakeMode: 'next-heartbeat', deliver: true, channel: 'chatnet', to: '42' };
    const config = {
      gateway: { auth: { token: GATEWAY } },
      hooks: {
        enabled: true,
        token: TOKEN,
        mappings: [
          { id: 'broken', match: { path: 'broken' }, ...agent, messageTemplate: 'broken {{n}}', model: 'dead/x' },
          { id: 'healthy', match: { path: 'healthy' }, ...agent, messageTemplate: 'healthy', model: 'live/y' },
        ],
      },
      agents: { defaults: { model: 'live/y', maxConcurrentRuns: 4, heartbeat: { every: '0' } } },
      models: {
        providers: {
          dead: { baseUrl: REFUSED, api: 'openai-chat' },
          live: { baseUrl: model.url, api: 'openai-chat' },
        },
      },
      channels: { chatnet: { apiBase: chat.url, botToken: 'bot-isolation-token' } },
    };
    const hookd = await startHookd({ config });
    cleanups.push(() => hookd.stop());
    const hook = (path: string, json: unknown) =>
      call(`${hookd.url}/hooks/${path}`, { headers: { authorization: `Bearer ${TOKEN}` }, json });
    const admin = async (path: string) =>
      call(`${hookd.url}${path}`, { method: 'GET', headers: { authorization: `Bearer ${GATEWAY}` } });
    const broken: string[] = [];
    for (let n = 0; n < 20; n++) {
      const answer = await hook('broken', { n });
      expect(answer.status).toBe(202);
      broken.push(answer.body.runId as string);
    }
    const sentAt = Date.now();
    expect((await hook('healthy', {})).status).toBe(202);
    await until(async () => (chat.sent.some((m) => m.text === 'the healthy reply') ? true : undefined), 'the reply');
    // Measured 50-130 ms on a shared 2-core machine.
    expect(Date.now() - sentAt).toBeLessThan(2000);

    // The dead model's breaker is open, and says so wherever an operator looks.
    const health = await until(async () => {
      const answer = await call(`${hookd.url}/healthz`, { method: 'GET' });
      return (answer.body.breakers as unknown[]).length > 0 ? answer : undefined;
    }, 'the breaker');
    expect(health.body).toMatchObject({
      ok: true,
      breakers: [{ target: 'dead/x', kind: 'model', state: 'open', waiting: expect.any(Number) }],
    });
    const [breaker] = health.body.breakers as { failures: number; lastError: string }[];
    // Five in a row opened it; tries already under way then may have failed too.
    expect(breaker?.failures).toBeGreaterThanOrEqual(5);
    expect(breaker?.lastError).toMatch(/^MODEL_UNREACHABLE: connect ECONNREFUSED/);
    const metrics = await call(`${hookd.url}/metrics`, { method: 'GET' });
    expect(metrics.text).toContain('hookd_breaker_open{target="dead/x"} 1');
    expect(metrics.text).toContain('hookd_breaker_open{target="live/y"} 0');
    const waiting = (await admin(`/api/runs/${broken[19]}`)).body as unknown as RunView;
    expect(waiting.status).toBe('queued');
    expect(waiting.waiting).toMatch(/^breaker open for dead\/x until \d{4}-\d\d-\d\dT[\d:.]+Z$/);
    const overview = (await admin('/api/overview')).body as { breakers: { target: string }[] };
    expect(overview.breakers.map((b) => b.target)).toEqual(['dead/x']);
    // Log lines are written in blocks every 100 ms.
    await until(async () => (/"msg":"breaker opened"/.test(hookd.stdout()) ? true : undefined), 'the log line');
  });
});

/** A model server that takes every call and never answers; `hung` holds the calls it keeps. */
async function silentModel() {
  const hung: ServerResponse[] = [];
  const silent = createServer((req, res) => {
    req.resume();
    hung.push(res);
  });
  await new Promise<void>((done) => silent.listen(0, '127.0.0.1', done));
  cleanups.push(() => new Promise((done) => silent.close(done)));
  cleanups.push(() => silent.closeAllConnections());
  return { hung, silentUrl: `http://127.0.0.1:${(silent.address() as AddressInfo).port}/v1` };
}

describe('a model server that takes calls and never answers (spawned gateway)', () => {
  it("leaves a run slot to another mapping's model: its reply is delivered while the calls hang", async () => {
    const { hung, silentUrl } = await silentModel();
    const model = await startFakeModel(() => 'the healthy reply');
    cleanups.push(() => model.close());
    const chat = await fakeChat();
    const agent = { action: 'agent', wakeMode: 'next-heartbeat', deliver: true, channel: 'chatnet', to: '42' };
    const hookd = await startHookd({
      config: {
        gateway: { auth: { token: GATEWAY } },
        hooks: {
          enabled: true,
          token: TOKEN,
          mappings: [
            { id: 'hangs', match: { path: 'hangs' }, ...agent, messageTemplate: 'hangs {{n}}', model: 'silent/x' },
            { id: 'healthy', match: { path: 'healthy' }, ...agent, messageTemplate: 'healthy', model: 'live/y' },
          ],
        },
        agents: { defaults: { model: 'live/y', maxConcurrentRuns: 4, heartbeat: { every: '0' } } },
        models: {
          providers: {
            silent: { baseUrl: silentUrl, api: 'openai-chat' },
            live: { baseUrl: model.url, api: 'openai-chat' },
          },
        },
        channels: { chatnet: { apiBase: chat.url, botToken: 'bot-isolation-token' } },
      },
    });
    cleanups.push(() => hookd.stop());
    const hook = (path: string, json: unknown) =>
      call(`${hookd.url}/hooks/${path}`, { headers: { authorization: `Bearer ${TOKEN}` }, json });
    for (let n = 0; n < 8; n++) expect((await hook('hangs', { n })).status).toBe(202);
    // The silent provider holds all the slots it may: one fewer than the run slots.
    await until(async () => (hung.length === 3 ? true : undefined), 'three hanging calls');
    expect((await hook('healthy', {})).status).toBe(202);
    await until(async () => (chat.sent.some((m) => m.text === 'the healthy reply') ? true : undefined), 'the reply');
    expect(hung).toHaveLength(3);
  });

  it('opens its breaker once five runs went unanswered for their whole time limit, and holds the rest', async () => {
    const { hung, silentUrl } = await silentModel();
    const hookd = await startHookd({
      config: {
        gateway: { auth: { token: GATEWAY } },
        hooks: { enabled: true, token: TOKEN },
        agents: { defaults: { model: 'silent/x', maxConcurrentRuns: 4, heartbeat: { every: '0' } } },
        models: { providers: { silent: { baseUrl: silentUrl, api: 'openai-chat' } } },
      },
    });
    cleanups.push(() => hookd.stop());
    const runIds: string[] = [];
    for (let n = 0; n < 9; n++) {
      const answer = await call(`${hookd.url}/hooks/agent`, {
        headers: { authorization: `Bearer ${TOKEN}` },
        json: { message: `hangs ${n}`, timeoutSeconds: 1, deliver: false },
      });
      expect(answer.status).toBe(202);
      runIds.push(answer.body.runId as string);
    }
    // Before: each run held a slot for its whole limit and ended `timed out after 1s`, and nothing
    // opened or said why.
    const health = await until(async () => {
      const answer = await call(`${hookd.url}/healthz`, { method: 'GET' });
      const breakers = answer.body.breakers as { state: string }[];
      return breakers.some((b) => b.state === 'open') ? answer : undefined;
    }, 'the breaker');
    const [breaker] = health.body.breakers as { target: string; failures: number; lastError: string }[];
    expect(breaker).toMatchObject({
      target: 'silent/x',
      lastError: expect.stringMatching(/^MODEL_UNREACHABLE: no answer in \d+ s$/),
    });
    expect(breaker?.failures).toBeGreaterThanOrEqual(5);
    const admin = async (path: string) =>
      (await call(`${hookd.url}${path}`, { method: 'GET', headers: { authorization: `Bearer ${GATEWAY}` } })).body;
    const first = (await admin(`/api/runs/${runIds[0]}`)) as unknown as RunView;
    expect(first.status).toBe('timeout');
    expect(first.error).toMatch(/^timed out after 1s \(the model server failed 1 time, last: no answer in \d+ s/);
    expect(first.attempts).toEqual([expect.objectContaining({ kind: 'model', outcome: 'MODEL_UNREACHABLE' })]);
    // Tries that went unanswered: one a run, the ones cut after the breaker opened not counted.
    expect(hung.length).toBeLessThan(runIds.length);
  });
});

describe('a channel that answers 503 to one mapping (spawned gateway)', () => {
  it("delivers another mapping's reply through its own channel within 2 s, and shows the broken one's breaker", async () => {
    // Two Bot-API channels: the first answers 503 to everything (its breaker opens), the second works.
    const down = await fakeChat();
    down.failNext(Number.MAX_SAFE_INTEGER);
    const up = await fakeChat();
    const model = await startFakeModel((r) =>
      isHeartbeat(r)
        ? 'HEARTBEAT_OK'
        : r.messages.at(-1)?.content.includes('healthy')
          ? 'the healthy reply'
          : 'a reply',
    );
    cleanups.push(() => model.close());
    const agent = { action: 'agent', wakeMode: 'next-heartbeat', deliver: true, to: '42' };
    const config = {
      gateway: { auth: { token: GATEWAY } },
      hooks: {
        enabled: true,
        token: TOKEN,
        mappings: [
          { id: 'broken', match: { path: 'broken' }, ...agent, channel: 'down', messageTemplate: 'broken {{n}}' },
          { id: 'healthy', match: { path: 'healthy' }, ...agent, channel: 'up', messageTemplate: 'healthy' },
        ],
      },
      agents: { defaults: { model: 'live/y', maxConcurrentRuns: 4, heartbeat: { every: '0' } } },
      models: { providers: { live: { baseUrl: model.url, api: 'openai-chat' } } },
      channels: {
        down: { kind: 'chatnet', apiBase: down.url, botToken: 'bot-down-token' },
        up: { kind: 'chatnet', apiBase: up.url, botToken: 'bot-up-token' },
      },
    };
    const hookd = await startHookd({ config });
    cleanups.push(() => hookd.stop());
    const hook = (path: string, json: unknown) =>
      call(`${hookd.url}/hooks/${path}`, { headers: { authorization: `Bearer ${TOKEN}` }, json });
    for (let n = 0; n < 20; n++) expect((await hook('broken', { n })).status).toBe(202);
    const sentAt = Date.now();
    expect((await hook('healthy', {})).status).toBe(202);
    await until(async () => (up.sent.some((m) => m.text === 'the healthy reply') ? true : undefined), 'the reply');
    expect(Date.now() - sentAt).toBeLessThan(2000);
    // The broken channel's breaker opens once five of its deliveries failed in a row, and says so.
    await until(async () => {
      const answer = await call(`${hookd.url}/healthz`, { method: 'GET' });
      const breakers = answer.body.breakers as { target: string; state: string }[];
      return breakers.some((b) => b.target === 'down' && b.state === 'open') ? true : undefined;
    }, "the down channel's breaker");
    expect(down.sent).toEqual([]);
  });
});
