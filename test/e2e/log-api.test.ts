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

  it('finds requests by event type, by id, by body text, in a time range, and the refused ones apart', async () => {
    const marker = `m${Date.now()}`;
    const first = await hook('gh', { ref: `refs/heads/${marker}-One` }, { 'x-github-event': `${marker}_create` });
    const second = await hook('gh', { ref: 'refs/heads/other' }, { 'x-github-event': `${marker}_create` });
    const third = await hook('gh', { ref: 'refs/heads/third' }, { 'x-github-event': `${marker}_delete` });
    const refused = await call(`${hookd.url}/hooks/gh`, {
      headers: { authorization: 'Bearer wrong-token-0123456789', 'x-github-event': `${marker}_create` },
      json: { ref: marker },
    });
    expect([first.status, second.status, third.status, refused.status]).toEqual([202, 202, 202, 401]);
    await listed(idOf(refused));
    const ids = async (query: string) => (await requests(query)).requests.map((r) => r.id);
    const [one, two, three] = [first, second, third].map(idOf) as [string, string, string];

    expect(await ids(`eventType=${marker}_create`)).toEqual([two, one]);
    expect(await ids(`q=${one}`)).toEqual([one]);
    // Text of the stored body, ASCII letters in any case; text of the event type.
    expect(await ids(`q=${marker.toUpperCase()}-one`)).toEqual([one]);
    expect(await ids(`q=${marker}_DEL`)).toEqual([three]);
    // The refused request carries the marker too, but no body and no event type are kept of it.
    expect(await ids(`q=${marker}&refused=false`)).toEqual([three, two, one]);
    expect(await ids(`refused=true&limit=500`)).toContain(idOf(refused));
    expect(await ids(`refused=false&limit=500`)).not.toContain(idOf(refused));
    const refusedItem = (await requests('refused=true&limit=500')).requests.find((r) => r.id === idOf(refused));
    expect(refusedItem).toMatchObject({ authenticated: false, status: 401, code: 'UNAUTHORIZED' });
    expect(refusedItem).not.toHaveProperty('eventType');

    // A range: since (inclusive) and until (exclusive), ISO times or durations back from now.
    const times = (await requests(`eventType=${marker}_create`)).requests.map((r) => r.receivedAt);
    const [newest, oldest] = times as [string, string];
    expect(await ids(`eventType=${marker}_create&until=${oldest}`)).toEqual([]);
    expect(await ids(`eventType=${marker}_create&since=${oldest}&until=${newest}`)).toEqual(
      newest === oldest ? [] : [one],
    );
    expect(await ids(`q=${marker}&until=1d`)).toEqual([]);

    // Pages of a filtered list, by cursor.
    const page = await requests(`q=${marker}&refused=false&limit=2`);
    expect(page.requests.map((r) => r.id)).toEqual([three, two]);
    expect(await ids(`q=${marker}&refused=false&limit=2&cursor=${page.nextCursor}`)).toEqual([one]);

    const twice = await admin('/api/requests?q=a&q=b');
    expect(twice.status).toBe(400);
    expect(twice.body).toMatchObject({ code: 'INVALID_FIELD' });
  });

  it("lists a mapping's runs, with a status", async () => {
    const batch = await hook('fan', { kind: 'batch', items: ['second ok', 'second fail'] });
    expect(batch.status).toBe(202);
    const runIds = (batch.body.runIds as string[]).sort();
    const runs = async (query: string) => (await admin(`/api/runs?limit=500&${query}`)).body.runs as RunListItem[];
    await until(
      async () => ((await runs('mapping=fan&status=error')).some((r) => runIds.includes(r.runId)) ? true : undefined),
      'the failed run of the batch',
      15_000,
    );
    const ofFan = await runs('mapping=fan');
    expect(ofFan.length).toBeGreaterThanOrEqual(2);
    expect(new Set(ofFan.map((r) => r.mappingId))).toEqual(new Set(['fan']));
    expect(ofFan.map((r) => r.runId)).toEqual(expect.arrayContaining(runIds));
    const failed = await runs('mapping=fan&status=error');
    expect(failed.every((r) => r.mappingId === 'fan' && r.status === 'error')).toBe(true);
    expect(await runs('mapping=no-such-mapping')).toEqual([]);
    expect((await runs('mapping=gh')).every((r) => r.mappingId === 'gh')).toBe(true);
  });
});
