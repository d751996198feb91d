import { afterEach, describe, expect, it } from 'vitest';
import type { MainEventsView, RunView } from '../../src/views.js';
import { type FakeChat, startFakeChat } from '../helpers/fake-chat.js';
import { type FakeModel, isHeartbeat, startFakeModel } from '../helpers/fake-model.js';
import { type HookdProcess, runHookd, startHookd, writeConfig } from '../helpers/hookd-process.js';
import { type Answer, call, until } from '../helpers/http.js';

/**
 * Cancelling a run (docs/runtime.md#cancel) through the admin API and `hookd runs cancel`, on a
 * spawned gateway: a running run's model call is aborted, nothing is delivered, the main session
 * is told `Hook <name> (cancelled)`.
 */

const TOKEN = 'cancel-hook-token-0123456789';
const GATEWAY = 'cancel-gateway-token-0123456789';
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

interface World {
  readonly hookd: HookdProcess;
  readonly model: FakeModel;
  readonly chat: FakeChat;
  readonly configFile: string;
  agent(name: string): Promise<string>;
  run(runId: string): Promise<RunView>;
  cancel(runId: string): Promise<Answer>;
}

/** A gateway whose model stalls every run (never answers) and answers heartbeats. */
async function world(maxConcurrentRuns = 4): Promise<World> {
  const model = await startFakeModel((r) => (isHeartbeat(r) ? 'HEARTBEAT_OK' : { stall: true }));
  cleanups.push(() => model.close());
  const chat = await startFakeChat();
  cleanups.push(() => chat.close());
  const config = {
    gateway: { auth: { token: GATEWAY } },
    hooks: { enabled: true, token: TOKEN },
    agents: { defaults: { model: 'fake/m', maxConcurrentRuns, heartbeat: { every: '0' } } },
    models: { providers: { fake: { baseUrl: model.url, api: 'openai-chat' } } },
    channels: { chatnet: { apiBase: chat.url, botToken: 'bot-cancel-token', defaultTo: '42' } },
  };
  const hookd = await startHookd({ config });
  cleanups.push(() => hookd.stop());
  const auth = { authorization: `Bearer ${GATEWAY}` };
  return {
    hookd,
    model,
    chat,
    configFile: writeConfig(hookd.dir, config),
    async agent(name) {
      const answer = await call(`${hookd.url}/hooks/agent`, {
        headers: { authorization: `Bearer ${TOKEN}` },
        json: { message: `deploy ${name}`, name, deliver: true, channel: 'chatnet', to: '42', wakeMode: 'now' },
      });
      expect(answer.status).toBe(202);
      return answer.body.runId as string;
    },
    run: async (runId) =>
      (await call(`${hookd.url}/api/runs/${runId}`, { method: 'GET', headers: auth })).body as unknown as RunView,
    cancel: (runId) => call(`${hookd.url}/api/runs/${runId}/cancel`, { headers: auth }),
  };
}

describe('cancelling a run', () => {
  it("aborts a running run's model call with `hookd runs cancel`, delivers nothing and tells the main session", async () => {
    const w = await world();
    const runId = await w.agent('deploy');
    await until(async () => (w.model.requests.length === 1 ? true : undefined), 'the model call');
    expect((await w.run(runId)).status).toBe('running');
    const cli = await runHookd(['runs', 'cancel', runId, '--config', w.configFile, '--url', w.hookd.url], {
      cwd: w.hookd.dir,
    });
    expect(cli.stderr).toBe('');
    expect(cli.stdout.trim()).toBe(`run ${runId} cancelled`);
    expect(cli.code).toBe(0);
    expect(await w.run(runId)).toMatchObject({
      status: 'cancelled',
      error: 'cancelled by the operator',
      delivery: { status: 'skipped', reason: 'cancelled' },
    });
    await until(async () => (w.model.abandoned === 1 ? true : undefined), 'the model call to be aborted');
    const events = (
      await call(`${w.hookd.url}/api/main/events`, { method: 'GET', headers: { authorization: `Bearer ${GATEWAY}` } })
    ).body as unknown as MainEventsView;
    expect(events.events.map((e) => e.text)).toContain('Hook deploy (cancelled)');
    expect(w.chat.sent).toEqual([]);
    // Nothing to cancel once it is over: 409, and the CLI says so.
    const again = await w.cancel(runId);
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({
      code: 'RUN_FINISHED',
      error: `run ${runId} has finished (cancelled): there is nothing to cancel`,
    });
    const refused = await runHookd(['runs', 'cancel', runId, '--config', w.configFile, '--url', w.hookd.url], {
      cwd: w.hookd.dir,
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('the gateway answered 409');
    expect(refused.stderr).toContain('(RUN_FINISHED)');
  });

  it('ends a queued run before its model is asked, and answers 404 for an unknown run', async () => {
    const w = await world(1);
    const first = await w.agent('first');
    const second = await w.agent('second');
    await until(async () => (w.model.requests.length === 1 ? true : undefined), 'the first model call');
    const view = await w.run(second);
    expect(view.status).toBe('queued');
    expect(view.waiting).toBe('waiting for a run slot (1 of 1 in use)');
    const listed = await runHookd(['runs', '--config', w.configFile, '--url', w.hookd.url], { cwd: w.hookd.dir });
    expect(listed.stdout.split('\n').find((line) => line.includes(second))).toMatch(
      /\squeued: waiting for a run slot \(1 of 1 in use\)\s+second\s/,
    );
    const answer = await w.cancel(second);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ runId: second, status: 'cancelled' });
    expect((await w.run(second)).status).toBe('cancelled');
    expect(w.model.requests).toHaveLength(1);
    expect((await w.run(first)).status).toBe('running');
    const unknown = await w.cancel('no-such-run');
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('NOT_FOUND');
  });
});
