import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RequestView, RunListItem } from '../../src/views.js';
import { type FakeModel, isHeartbeat, lastUser, startFakeModel } from '../helpers/fake-model.js';
import { type HookdProcess, makeTempDir, startHookd } from '../helpers/hookd-process.js';
import { type Answer, call, until } from '../helpers/http.js';
import { type SuiteStore, suiteStore, suiteStores } from '../helpers/postgres.js';

/**
 * What the console reads of the request log and the runs (docs/runtime.md#request-log-and-replay,
 * issue 28 item 5): event types, run outcomes, search and filters, over a spawned gateway on
 * each store.
 */

const HOOK_TOKEN = 'log-api-hook-token-0123456789';
const GATEWAY_TOKEN = 'log-api-gateway-token-0123456789';
const HOOK = { authorization: `Bearer ${HOOK_TOKEN}` };
const ADMIN = { authorization: `Bearer ${GATEWAY_TOKEN}` };

describe.each(suiteStores)('the request log API on %s', (kind) => {
  let store: SuiteStore;
  let hookd: HookdProcess;
  let model: FakeModel;
  const cleanups: (() => Promise<unknown> | unknown)[] = [];

  beforeAll(async () => {
    store = suiteStore(kind);
    cleanups.push(() => store.stop());
    const temp = makeTempDir();
    cleanups.push(temp.cleanup);
    // A run whose message names `fail` is refused by the model at once (a 400 is not retried).
    model = await startFakeModel((r) =>
      isHeartbeat(r) ? 'HEARTBEAT_OK' : lastUser(r).includes('fail') ? { status: 400 } : 'done',
    );
    cleanups.push(() => model.close());
    hookd = await startHookd({
      dir: temp.dir,
      config: {
        gateway: { auth: { token: GATEWAY_TOKEN } },
        storage: await store.storage('log-api'),
        hooks: {
          enabled: true,
          token: HOOK_TOKEN,
          mappings: [
            {
              id: 'gh',
              match: { path: 'gh' },
              eventType: { header: 'x-github-event' },
              messageTemplate: 'push to {{ref}}',
              deliver: false,
            },
            {
              id: 'fan',
              match: { path: 'fan' },
              eventType: { path: 'kind' },
              forEach: 'items',
              messageTemplate: 'item {{items.0}}',
              deliver: false,
            },
            {
              id: 'note',
              match: { path: 'note' },
              action: 'wake',
              textTemplate: '{{text}}',
              eventType: { path: 'kind' },
            },
          ],
        },
        agents: { defaults: { model: 'fake/m', heartbeat: { every: '0' } } },
        models: { providers: { fake: { baseUrl: model.url, api: 'openai-chat' } } },
      },
    });
    cleanups.push(() => hookd.stop());
  }, 60_000);

  afterAll(async () => {
    for (const fn of cleanups.splice(0).reverse()) await fn();
  });

  const hook = (path: string, json: unknown, headers: Record<string, string> = {}) =>
    call(`${hookd.url}/hooks/${path}`, { headers: { ...HOOK, ...headers }, json });
  const admin = (path: string) => call(`${hookd.url}${path}`, { method: 'GET', headers: ADMIN });
  const requests = async (query: string) => {
    const answer = await admin(`/api/requests?${query}`);
    expect(answer.status).toBe(200);
    return answer.body as { requests: RequestView[]; nextCursor: string | null };
  };
  const idOf = (answer: Answer) => String(answer.headers['x-request-id']);
  /** The request's list item once `done` holds for it. */
  const listed = (id: string, done: (r: RequestView) => boolean = () => true) =>
    until(
      async () => (await requests('limit=500')).requests.find((r) => r.id === id && done(r)),
      `request ${id} listed`,
      15_000,
    );

  it("lists each request with its event type and its runs' outcome: one status, or mixed", async () => {
    const push = await hook('gh', { ref: 'main' }, { 'x-github-event': 'push' });
    const batch = await hook('fan', { kind: 'batch', items: ['ok', 'fail'] });
    const wake = await hook('note', { kind: 'memo', text: 'remember' });
    expect([push.status, batch.status, wake.status]).toEqual([202, 202, 200]);
    const ended = (r: RequestView) => r.outcome !== undefined && !['queued', 'running'].includes(r.outcome.status);
    expect(await listed(idOf(push), ended)).toMatchObject({ eventType: 'push', outcome: { status: 'ok' } });
    const mixed = await until(
      async () => {
        const item = await listed(idOf(batch));
        return item.outcome?.status === 'mixed' && item.runIds.length === 2 ? item : undefined;
      },
      'both runs of the batch ended',
      15_000,
    );
    expect(mixed.eventType).toBe('batch');
    const runs = (await admin('/api/runs?limit=500')).body.runs as RunListItem[];
    expect(
      runs
        .filter((r) => mixed.runIds.includes(r.runId))
        .map((r) => r.status)
        .sort(),
    ).toEqual(['error', 'ok']);
    const memo = await listed(idOf(wake));
    expect(memo.eventType).toBe('memo');
    expect(memo).not.toHaveProperty('outcome');
  });
});
