import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type ChatRequest, type FakeModel, isHeartbeat, lastUser, startFakeModel } from '../helpers/fake-model.js';
import { ROOT, startHookd } from '../helpers/hookd-process.js';
import { call } from '../helpers/http.js';
import { type SuiteStore, suiteStore, suiteStores } from '../helpers/postgres.js';

const TOKEN = 'mapping-hook-token-0123456789';
const HOOK = { authorization: `Bearer ${TOKEN}` };

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

// The suite runs once per store (SQLite, and PostgreSQL where its tests run).
let store: SuiteStore;
let gateways = 0;

async function gateway(hooks: Record<string, unknown>) {
  const model = await startFakeModel((r) => (isHeartbeat(r) ? 'HEARTBEAT_OK' : 'ok'));
  cleanups.push(() => model.close());
  const hookd = await startHookd({
    config: {
      storage: await store.storage(String(++gateways)),
      hooks: { enabled: true, token: TOKEN, ...hooks },
      agents: { defaults: { model: 'fake/default', heartbeat: { every: '0' } } },
      models: { providers: { fake: { baseUrl: model.url, api: 'openai-chat' } } },
    },
  });
  cleanups.push(() => hookd.stop());
  return {
    model,
    hookd,
    post: (path: string, options: Parameters<typeof call>[1]) =>
      call(`${hookd.url}/hooks/${path}`, { headers: HOOK, ...options }),
  };
}

const agentCalls = (model: FakeModel) => model.requests.filter((r) => !isHeartbeat(r));

describe.each(suiteStores)('mapped hooks end to end on %s', (kind) => {
  beforeAll(() => {
    store = suiteStore(kind);
  });
  afterAll(() => store.stop());

  it('renders a GitHub push through a template mapping into a wrapped model message', async () => {
    const { model, post } = await gateway({
      mappings: [
        {
          match: { path: 'github' },
          name: 'GitHub {{repository.name}}',
          sessionKey: 'hook:github:{{repository.full_name}}',
          messageTemplate:
            '{{headers.x-github-event}} to {{repository.full_name}} by {{pusher.name}}: {{head_commit.message}}',
        },
      ],
    });
    const body = readFileSync(join(ROOT, 'test/fixtures/github-push.json'));
    const res = await post('github', {
      headers: { ...HOOK, 'content-type': 'application/json', 'x-github-event': 'push' },
      body,
    });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ ok: true, runId: expect.any(String), sessionKey: 'hook:github:acme/site' });
    await expect.poll(() => model.requests.length).toBe(2);
    const turn = lastUser(agentCalls(model)[0]);
    expect(turn).toMatch(
      /<<<EXTERNAL_UNTRUSTED_CONTENT id="[0-9a-f]{16}">>>\nSource: Webhook\n---\npush to acme\/site by ada: Fix <nav> & footer\n<<<END_/,
    );
    expect(lastUser(model.requests.find(isHeartbeat))).toContain('Hook GitHub site: ok');
  });

  it('routes one /hooks/ingest to three actions by match.source; an unknown source is 404', async () => {
    const { model, post } = await gateway({
      mappings: [
        {
          match: { path: 'ingest', source: 'monitoring' },
          action: 'wake',
          textTemplate: 'alert: {{check}} is {{state}}',
        },
        {
          match: { path: 'ingest', source: 'ci' },
          name: 'CI',
          messageTemplate: 'build {{build}} {{result}}',
          wakeMode: 'next-heartbeat',
        },
        {
          match: { path: 'ingest', source: 'home' },
          action: 'wake',
          textTemplate: 'door {{door}} opened',
          wakeMode: 'next-heartbeat',
        },
      ],
    });
    const monitoring = await post('ingest', { json: { source: 'monitoring', check: 'nas-disk', state: 'critical' } });
    expect(monitoring.status).toBe(200);
    expect(monitoring.body).toMatchObject({ ok: true, mode: 'now', eventId: expect.any(String) });
    const ci = await post('ingest', { json: { source: 'ci', build: 812, result: 'failed' } });
    expect(ci.status).toBe(202);
    expect(ci.body).toMatchObject({ runId: expect.any(String) });
    const home = await post('ingest', { json: { source: 'home', door: 'front' } });
    expect(home.body).toMatchObject({ ok: true, mode: 'next-heartbeat' });
    const unknown = await post('ingest', { json: { source: 'weather' } });
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('NO_MAPPING');
    await expect.poll(() => agentCalls(model).length).toBe(1);
    expect(lastUser(agentCalls(model)[0])).toContain('build 812 failed');
    await expect.poll(() => model.requests.filter(isHeartbeat).length).toBeGreaterThan(0);
    expect(lastUser(model.requests.find(isHeartbeat))).toContain('alert: nas-disk is critical');
  });

  it('runs the mail preset per message with Source: Email and hooks.mail.model, and allows 8 MiB on /hooks/mail only', async () => {
    const { model, post } = await gateway({
      presets: ['mail'],
      mail: { account: 'me@example.com', model: 'fake/mail-model' },
    });
    const message = (id: string, body = `body of ${id}`) => ({
      id,
      threadId: `t-${id}`,
      from: `sender-${id}@example.com`,
      to: 'me@example.com',
      subject: `Subject ${id}`,
      date: '2026-11-22T09:00:00Z',
      snippet: `snippet ${id}`,
      body,
      labels: ['INBOX'],
    });
    const batch = {
      source: 'mail',
      account: 'me@example.com',
      historyId: '9001',
      messages: ['a1', 'b2', 'c3'].map((id) => message(id)),
    };
    const res = await post('mail', { json: batch });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({
      ok: true,
      runIds: [expect.any(String), expect.any(String), expect.any(String)],
      sessionKeys: ['hook:mail:a1', 'hook:mail:b2', 'hook:mail:c3'],
    });
    await expect.poll(() => agentCalls(model).length).toBe(3);
    for (const request of agentCalls(model)) {
      expect(request.model).toBe('mail-model');
      expect(lastUser(request)).toMatch(
        /Source: Email\n---\nNew email from sender-(\w+)@example\.com\nSubject: Subject \1\nsnippet \1\nbody of \1\n<<<END_/,
      );
    }

    const big = { ...batch, messages: [1, 2, 3, 4, 5].map((n) => message(`big${n}`, 'x'.repeat(1_000_000))) };
    const bigRes = await post('mail', { json: big });
    expect(bigRes.status).toBe(202);
    expect((bigRes.body.runIds as string[]).length).toBe(5);
    const agentRes = await post('agent', { json: { message: 'x'.repeat(300_000) } });
    expect(agentRes.status).toBe(413);
  });

  it('sends content without markers when the mapping allows unsafe external content', async () => {
    const { model, post } = await gateway({
      mappings: [
        {
          match: { path: 'trusted' },
          messageTemplate: 'internal: {{note}}',
          allowUnsafeExternalContent: true,
          wakeMode: 'next-heartbeat',
        },
      ],
    });
    const res = await post('trusted', { json: { note: 'cron finished' } });
    expect(res.status).toBe(202);
    await expect.poll(() => model.requests.length).toBe(1);
    const turn = lastUser(model.requests[0] as ChatRequest);
    expect(turn).toBe('internal: cron finished');
    expect(turn).not.toContain('EXTERNAL_UNTRUSTED_CONTENT');
    expect(turn).not.toContain('SECURITY NOTICE');
  });

  it('answers 204 for a fan-out over an empty list', async () => {
    const { post } = await gateway({ presets: ['mail'] });
    const res = await post('mail', { json: { source: 'mail', messages: [] } });
    expect(res.status).toBe(204);
  });
});
