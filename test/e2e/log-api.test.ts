import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MappingView, RequestView, RunListItem } from '../../src/views.js';
import { type FakeModel, isHeartbeat, lastUser, startFakeModel } from '../helpers/fake-model.js';
import { type HookdProcess, makeTempDir, ROOT, startHookd } from '../helpers/hookd-process.js';
import { type Answer, call, until } from '../helpers/http.js';
import { type SuiteStore, suiteStore, suiteStores } from '../helpers/postgres.js';

/**
 * What the console reads of the request log and the runs (docs/runtime.md#request-log-and-replay):
 * event types, run outcomes, search and filters, over a spawned gateway on
 * each store.
 */

const HOOK_TOKEN = 'log-api-hook-token-0123456789';
const GATEWAY_TOKEN = 'log-api-gateway-token-0123456789';
const HOOK = { authorization: `Bearer ${HOOK_TOKEN}` };
const ADMIN = { authorization: `Bearer ${GATEWAY_TOKEN}` };

/** A transform that fails on line 3 when asked to, labelling its request first. */
const FLAKY = `export default function ({ payload }: { payload: { boom?: boolean; n: number } }) {
  if (payload.boom) {
    throw new Error('flaky broke on ' + payload.n);
  }
  return { kind: 'wake', text: 'fine ' + payload.n, eventType: 'flaky.fine' };
}
`;

/** A plugin preset, `acme`, with one recorded fixture. */
function writePlugin(dir: string): void {
  mkdirSync(join(dir, 'acme/fixtures'), { recursive: true });
  const manifest = {
    name: 'acme',
    description: 'Acme deploys',
    version: '1.0.0',
    eventType: { path: 'action' },
    mappings: [{ id: 'deploy', messageTemplate: 'deploy {{service}}', deliver: false }],
  };
  writeFileSync(join(dir, 'acme/preset.json5'), JSON.stringify(manifest));
  writeFileSync(join(dir, 'acme/README.md'), '# acme\n');
  const fixture = {
    description: 'a deploy finished',
    headers: { 'Content-Type': 'application/json', 'X-Acme': '1' },
    body: { action: 'deployed', service: 'api' },
    expect: [{ message: 'deploy api' }],
  };
  writeFileSync(join(dir, 'acme/fixtures/deploy.json'), JSON.stringify(fixture));
}

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
    writePlugin(temp.dir);
    mkdirSync(join(temp.dir, 'transforms'));
    writeFileSync(join(temp.dir, 'transforms/flaky.ts'), FLAKY);
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
            { id: 'flaky', match: { path: 'flaky' }, transform: { module: 'flaky.ts' } },
            {
              id: 'note',
              match: { path: 'note' },
              action: 'wake',
              textTemplate: '{{text}}',
              eventType: { path: 'kind' },
            },
          ],
          transformsDir: 'transforms',
          plugins: ['./acme'],
          presets: ['acme', { name: 'github', secret: 'gh-secret-for-log-api' }],
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
    const batchRuns = batch.body.runIds as string[];
    const statuses = await until(
      async () => {
        const runs = (await admin('/api/runs?limit=500')).body.runs as RunListItem[];
        const of = runs.filter((r) => batchRuns.includes(r.runId)).map((r) => r.status);
        return of.length === 2 && of.every((s) => s !== 'queued' && s !== 'running') ? of.sort() : undefined;
      },
      'both runs of the batch ended',
      15_000,
    );
    expect(statuses).toEqual(['error', 'ok']);
    expect(await listed(idOf(batch))).toMatchObject({
      eventType: 'batch',
      runIds: batchRuns,
      outcome: { status: 'mixed' },
    });
    // A transform's own eventType labels its request.
    const fine = await hook('flaky', { n: 1 });
    expect(fine.status).toBe(200);
    expect((await listed(idOf(fine))).eventType).toBe('flaky.fine');
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

  it("lists how each mapping reads its event type, and a preset's fixtures, which the playground can load", async () => {
    const { mappings } = (await admin('/api/mappings')).body as { mappings: MappingView[] };
    const byId = new Map(mappings.map((m) => [m.id, m]));
    expect(byId.get('gh')?.eventType).toBe('header x-github-event');
    expect(byId.get('fan')?.eventType).toBe('path kind');
    expect(byId.get('gh')).not.toHaveProperty('fixtures');
    expect(byId.get('plugin:acme:deploy')).toMatchObject({
      eventType: 'path action',
      preset: 'acme',
      fixtures: [{ name: 'deploy', description: 'a deploy finished', kind: 'preset' }],
    });
    const github = byId.get('preset:github');
    expect(github).toMatchObject({ eventType: 'header x-github-event', preset: 'github' });
    expect(github?.fixtures).toContainEqual({ name: 'push', description: expect.any(String), kind: 'preset' });
    expect(github?.fixtures?.length).toBe(12);

    const recorded = JSON.parse(readFileSync(join(ROOT, 'presets/github/fixtures/push.json'), 'utf8'));
    const push = await admin('/api/presets/github/fixtures/push');
    expect(push.status).toBe(200);
    expect(push.body).toEqual({ headers: recorded.headers, body: recorded.body });
    const deploy = await admin('/api/presets/acme/fixtures/deploy');
    expect(deploy.body).toEqual({
      headers: { 'Content-Type': 'application/json', 'X-Acme': '1' },
      body: { action: 'deployed', service: 'api' },
    });
    // What the playground does with it: the same engine labels it as the log would.
    const tried = await call(`${hookd.url}/api/try`, {
      headers: ADMIN,
      json: { path: 'acme', body: JSON.stringify(deploy.body.body), headers: deploy.body.headers },
    });
    expect(tried.body).toMatchObject({ ok: true, mapping: 'plugin:acme:deploy', eventType: 'deployed' });

    for (const path of [
      '/api/presets/github/fixtures/..%2F..%2Fpreset',
      '/api/presets/github/fixtures/..push',
      '/api/presets/github/fixtures/push%2F',
      '/api/presets/..%2Fgithub/fixtures/push',
    ]) {
      const answer = await admin(path);
      expect([path, answer.status, answer.body.code]).toEqual([path, 400, 'INVALID_FIELD']);
    }
    for (const path of [
      '/api/presets/stripe/fixtures/payment-intent-succeeded',
      '/api/presets/github/fixtures/no-such-fixture',
      '/api/presets/github/fixtures/push.json',
    ]) {
      const answer = await admin(path);
      expect([path, answer.status, answer.body.code]).toEqual([path, 404, 'NOT_FOUND']);
    }
  });

  it('lists what failed on our side (5xx, replays left out) and, apart, what was refused at the door, each with its message', async () => {
    const failed = await hook('flaky', { boom: true, n: 7 });
    expect(failed.status).toBe(500);
    const refused = await call(`${hookd.url}/hooks/flaky`, {
      headers: { 'x-hook-token': 'not-the-token-0123456789' },
      json: {},
    });
    expect(refused.status).toBe(401);
    // Written once answered, in commits that may land in any order (PostgreSQL runs several at once).
    await listed(idOf(failed));
    await listed(idOf(refused));
    // Its replay fails the same way: a record of its own, which the Failed page leaves out.
    const replay = await call(`${hookd.url}/api/requests/${idOf(failed)}/replay`, { headers: ADMIN });
    expect(replay.status).toBe(500);
    const replayId = idOf(replay);
    expect(await listed(replayId)).toMatchObject({
      replayOf: idOf(failed),
      reason: expect.stringMatching(/flaky broke on 7/),
    });

    const failures = (await requests('status=5xx&replays=false&limit=500')).requests;
    expect(failures.map((r) => r.id)).toContain(idOf(failed));
    expect(failures.map((r) => r.id)).not.toContain(replayId);
    expect(failures.every((r) => r.status >= 500 && r.replayOf === undefined)).toBe(true);
    expect(failures.find((r) => r.id === idOf(failed))).toMatchObject({
      code: 'TRANSFORM_FAILED',
      mappingId: 'flaky',
      reason: expect.stringMatching(/^transform failed: flaky\.ts:3:\d+: .*flaky broke on 7/),
    });

    const atTheDoor = (await requests('refused=true&limit=500')).requests;
    expect(atTheDoor.find((r) => r.id === idOf(refused))).toMatchObject({
      status: 401,
      code: 'UNAUTHORIZED',
      reason: 'missing or invalid hook token',
      authenticated: false,
    });
    expect(atTheDoor.every((r) => !r.authenticated)).toBe(true);
  });
});
