import { afterEach, describe, expect, it } from 'vitest';
import type { MainEventsView, RunView } from '../../src/views.js';
import { isHeartbeat, startFakeModel } from '../helpers/fake-model.js';
import { type HookdProcess, makeTempDir, startHookd } from '../helpers/hookd-process.js';
import { call, until } from '../helpers/http.js';
import { postgresTestsRun, startPgCluster } from '../helpers/postgres.js';

/**
 * Cancel across nodes on one PostgreSQL (docs/runtime.md#cancel): any node takes the request; the
 * node running the run aborts it at its next lease renewal; a run no node holds ends at once.
 */

const HOOK_TOKEN = 'pg-cancel-hook-token-0123456789';
const GATEWAY = 'pg-cancel-gateway-token-0123456789';
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

describe.skipIf(!postgresTestsRun)('cancelling a run on PostgreSQL nodes', () => {
  it('is answered by any node: the node running it aborts it within a lease renewal, one no node holds ends at once', async () => {
    const cluster = await startPgCluster();
    cleanups.push(() => cluster.stop());
    const model = await startFakeModel((r) => (isHeartbeat(r) ? 'HEARTBEAT_OK' : { stall: true }));
    cleanups.push(() => model.close());
    // Leases of 2 s: renewed, and cancels looked for, every 0.5 s.
    const config = {
      storage: { kind: 'postgres', url: cluster.url, leaseSeconds: 2 },
      gateway: { auth: { token: GATEWAY } },
      hooks: { enabled: true, token: HOOK_TOKEN },
      agents: { defaults: { model: 'fake/m', maxConcurrentRuns: 1, heartbeat: { every: '0' } } },
      models: { providers: { fake: { baseUrl: model.url, api: 'openai-chat' } } },
    };
    const node = async (): Promise<HookdProcess> => {
      const temp = makeTempDir('hookd-cancel-node-');
      cleanups.push(temp.cleanup);
      const started = await startHookd({ dir: temp.dir, config });
      cleanups.push(() => started.stop());
      return started;
    };
    const admin = { authorization: `Bearer ${GATEWAY}` };
    const run = async (on: HookdProcess, runId: string) =>
      (await call(`${on.url}/api/runs/${runId}`, { method: 'GET', headers: admin })).body as unknown as RunView;
    const agent = async (on: HookdProcess, name: string) => {
      const answer = await call(`${on.url}/hooks/agent`, {
        headers: { authorization: `Bearer ${HOOK_TOKEN}` },
        json: { message: `work ${name}`, name },
      });
      expect(answer.status).toBe(202);
      return answer.body.runId as string;
    };

    const a = await node();
    const first = await agent(a, 'first');
    await until(async () => (model.requests.length === 1 ? true : undefined), 'node a to run it');
    const b = await node();
    const second = await agent(b, 'second');
    await until(async () => (model.requests.length === 2 ? true : undefined), 'node b to run the second');
    // Each node runs one; the third waits for a node, held by none: the node asked ends it at once.
    const third = await agent(a, 'third');
    expect((await run(b, third)).status).toBe('queued');
    const now = await call(`${b.url}/api/runs/${third}/cancel`, { headers: admin });
    expect(now.status).toBe(200);
    expect(now.body).toEqual({ runId: third, status: 'cancelled' });
    expect(model.requests).toHaveLength(2);

    // Asked of node b, the run node a holds: b marks it, and a ends it at its next renewal.
    const askedAt = Date.now();
    const asked = await call(`${b.url}/api/runs/${first}/cancel`, { headers: admin });
    expect(asked.status).toBe(202);
    expect(asked.body).toEqual({ runId: first, status: 'cancelling' });
    expect((await run(b, first)).cancelling).toBe(true);
    const ended = await until(async () => {
      const view = await run(b, first);
      return view.status === 'cancelled' ? view : undefined;
    }, 'node a to end it');
    expect(Date.now() - askedAt).toBeLessThan(2000);
    expect(ended.cancelling).toBeUndefined();
    expect(ended.delivery).toEqual({ status: 'skipped', reason: 'cancelled' });
    await until(async () => (model.abandoned >= 1 ? true : undefined), 'its model call to be aborted');
    await until(async () => (/"msg":"run cancelled"/.test(a.stdout()) ? true : undefined), "node a's log line");

    const events = (await call(`${a.url}/api/main/events`, { method: 'GET', headers: admin }))
      .body as unknown as MainEventsView;
    const texts = events.events.map((e) => e.text);
    expect(texts).toContain('Hook first (cancelled)');
    expect(texts).toContain('Hook third (cancelled)');
    expect((await run(a, second)).status).toBe('running');
  });
});
