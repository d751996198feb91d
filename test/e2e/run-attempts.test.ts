import { afterEach, describe, expect, it } from 'vitest';
import type { RunView } from '../../src/views.js';
import { isHeartbeat, startFakeModel } from '../helpers/fake-model.js';
import { runHookd, startHookd, writeConfig } from '../helpers/hookd-process.js';
import { call, until } from '../helpers/http.js';

/**
 * What an operator sees of a run whose model server fails, with a spawned
 * gateway on the real clock: its failed tries as they happen, not at the run's time limit.
 */

const TOKEN = 'run-attempts-hook-token-0123456789';
const GATEWAY = 'run-attempts-gateway-token-0123456789';
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

describe('a run against a model server answering 500', () => {
  it('shows its failed tries in GET /api/runs/:id, the warn log and `hookd runs` while it is still running', async () => {
    const model = await startFakeModel((r) => (isHeartbeat(r) ? 'HEARTBEAT_OK' : { status: 500 }));
    cleanups.push(() => model.close());
    const config = {
      gateway: { auth: { token: GATEWAY } },
      hooks: {
        enabled: true,
        token: TOKEN,
        mappings: [{ id: 'ci', match: { path: 'ci' }, messageTemplate: 'build {{n}}' }],
      },
      agents: { defaults: { model: 'fake/m', heartbeat: { every: '0' } } },
      models: { providers: { fake: { baseUrl: model.url, apiKey: 'sk-run-attempts', api: 'openai-chat' } } },
    };
    const hookd = await startHookd({ config });
    cleanups.push(() => hookd.stop());
    const started = Date.now();
    const sent = await call(`${hookd.url}/hooks/ci`, { headers: { authorization: `Bearer ${TOKEN}` }, json: { n: 7 } });
    expect(sent.status).toBe(202);
    const runId = sent.body.runId as string;
    const run = await until(async () => {
      const view = (
        await call(`${hookd.url}/api/runs/${runId}`, { method: 'GET', headers: { authorization: `Bearer ${GATEWAY}` } })
      ).body as unknown as RunView;
      return view.attempts.length >= 3 ? view : undefined;
    }, 'three failed tries');
    // The waits between them add to 750 ms (250 ms, doubling). Shown only at the run's end they
    // would take its 600 s; a backoff begun at its 5 s cap, 10 s. 8 s leave a loaded machine room.
    expect(Date.now() - started).toBeLessThan(8000);
    expect(run.status).toBe('running');
    expect(run.attempts.slice(0, 3).map((a) => [a.kind, a.n, a.outcome, a.status])).toEqual([
      ['model', 1, 'MODEL_REFUSED', 500],
      ['model', 2, 'MODEL_REFUSED', 500],
      ['model', 3, 'MODEL_REFUSED', 500],
    ]);
    expect(run.retrying).toMatch(/^retrying \(attempt \d+, last: HTTP 500 \{"error":\{"message":"fake error"\}\}\)$/);
    const warned = hookd
      .stdout()
      .split('\n')
      .filter((line) => line.includes('"msg":"model attempt failed"'))
      .map((line) => JSON.parse(line) as { runId: string; mapping: string; level: number });
    expect(warned[0]).toMatchObject({ runId, mapping: 'ci', level: 40 });
    const cli = await runHookd(['runs', '--config', writeConfig(hookd.dir, config), '--url', hookd.url], {
      cwd: hookd.dir,
    });
    expect(cli.code).toBe(0);
    expect(cli.stdout).toMatch(/ running: retrying \(attempt \d+, last: HTTP 500 /);
  });
});
