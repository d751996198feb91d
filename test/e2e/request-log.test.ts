import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { type FakeChat, startFakeChat } from '../helpers/fake-chat.js';
import { type FakeModel, isHeartbeat, startFakeModel } from '../helpers/fake-model.js';
import { type HookdProcess, makeTempDir, startHookd } from '../helpers/hookd-process.js';
import { call, until } from '../helpers/http.js';

const HOOK_TOKEN = 'log-hook-token-0123456789';
const GATEWAY_TOKEN = 'log-gateway-token-0123456789';
const HOOK = { authorization: `Bearer ${HOOK_TOKEN}` };
const ADMIN = { authorization: `Bearer ${GATEWAY_TOKEN}` };
const GITHUB_SECRET = 'gh-log-secret';

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const THROWS = `export default function () { throw new Error('not fixed yet'); }\n`;
const FIXED = `export default function ({ payload }: { payload: { n: number } }) {
  return { kind: 'agent', message: 'fixed ' + payload.n };
}\n`;

interface World {
  dir: string;
  model: FakeModel;
  chat: FakeChat;
  hookd: HookdProcess;
  hook(path: string, json: unknown, headers?: Record<string, string>): ReturnType<typeof call>;
  admin(path: string, method?: string): ReturnType<typeof call>;
  restart(mappings?: object[]): Promise<void>;
}

function configOf(model: FakeModel, chat: FakeChat, mappings: object[]) {
  return {
    gateway: { auth: { token: GATEWAY_TOKEN } },
    hooks: {
      enabled: true,
      token: HOOK_TOKEN,
      transformsDir: 'transforms',
      log: { redact: ['card.number', 'items.*.secret'], maxBodyBytes: 2048 },
      mappings,
    },
    agents: { defaults: { model: 'fake/m', heartbeat: { every: '0' } } },
    models: { providers: { fake: { baseUrl: model.url, api: 'openai-chat' } } },
    channels: { chatnet: { apiBase: chat.url, botToken: 'bot-secret-123', defaultTo: '42' } },
  };
}

const MAPPINGS = [
  { id: 'flaky', match: { path: 'flaky' }, transform: { module: 'flaky.ts' }, deliver: false },
  {
    id: 'gh',
    match: { path: 'gh' },
    verify: { scheme: 'github', secret: GITHUB_SECRET },
    action: 'wake',
    textTemplate: 'push {{n}}',
  },
  { id: 'note', match: { path: 'note' }, action: 'wake', textTemplate: 'note {{n}}' },
];

async function world(): Promise<World> {
  const temp = makeTempDir();
  cleanups.push(temp.cleanup);
  mkdirSync(join(temp.dir, 'transforms'));
  writeFileSync(join(temp.dir, 'transforms/flaky.ts'), THROWS);
  const model = await startFakeModel((r) => (isHeartbeat(r) ? 'HEARTBEAT_OK' : 'the reply'));
  cleanups.push(() => model.close());
  const chat = await startFakeChat();
  cleanups.push(() => chat.close());
  const w = {
    dir: temp.dir,
    model,
    chat,
    hookd: await startHookd({ dir: temp.dir, config: configOf(model, chat, MAPPINGS) }),
    hook: (path: string, json: unknown, headers: Record<string, string> = HOOK) =>
      call(`${w.hookd.url}/hooks/${path}`, { headers, json }),
    admin: (path: string, method = 'GET') => call(`${w.hookd.url}${path}`, { method, headers: ADMIN }),
    async restart(mappings = MAPPINGS) {
      await w.hookd.stop();
      w.hookd = await startHookd({ dir: temp.dir, config: configOf(model, chat, mappings) });
    },
  };
  cleanups.push(() => w.hookd.stop());
  return w;
}

const runDone = (w: World, runId: string) =>
  until(async () => {
    const run = (await w.admin(`/api/runs/${runId}`)).body;
    return run.delivery ? run : undefined;
  }, `run ${runId} to finish`);

describe('the request log (docs/runtime.md#request-log-and-replay)', () => {
  it('records every authenticated request with its actions, redacted and capped; lists with filters and a cursor', async () => {
    const w = await world();
    const wake = await w.hook(
      'wake',
      { text: 'hello', card: { number: '4242' } },
      { ...HOOK, 'x-request-id': 'req-wake-1' },
    );
    expect(wake.status).toBe(200);
    const agent = await w.hook('agent', { message: 'do it', deliver: false });
    expect(agent.status).toBe(202);
    expect((await w.hook('wake', { text: '' })).status).toBe(400);
    expect((await w.hook('note', { n: 1, items: [{ secret: 's1', keep: 'k' }], pad: 'x'.repeat(4000) })).status).toBe(
      200,
    );
    // Not authenticated: a refused record, without its body or its token.
    expect((await w.hook('wake', { text: 'x' }, { authorization: 'Bearer wrong-token-0123456789' })).status).toBe(401);

    const listed = await until(async () => {
      const { body } = await w.admin('/api/requests');
      const requests = body.requests as { id: string }[];
      return requests.length === 5 ? requests : undefined;
    }, 'five records');
    expect(listed.map((r: Record<string, unknown>) => [r.path, r.status, r.code ?? null, r.authenticated])).toEqual([
      ['wake', 401, 'UNAUTHORIZED', false],
      ['note', 200, null, true],
      ['wake', 400, 'TEXT_REQUIRED', true],
      ['agent', 202, null, true],
      ['wake', 200, null, true],
    ]);
    const refused = (await w.admin(`/api/requests/${listed[0]?.id}`)).body;
    expect(refused).toMatchObject({ client: '127.0.0.1', reason: 'missing or invalid hook token', body: '' });
    expect(refused).toMatchObject({ bodyWhole: false, credentials: { authorization: { verified: false } } });
    expect(JSON.stringify(refused)).not.toContain('wrong-token');

    const detail = (await w.admin('/api/requests/req-wake-1')).body;
    expect(detail).toMatchObject({ id: 'req-wake-1', path: 'wake', status: 200, redacted: true, truncated: false });
    expect(detail).toMatchObject({ client: '127.0.0.1', authenticated: true, bodyWhole: false });
    expect(JSON.parse(detail.body as string)).toEqual({ text: 'hello', card: { number: '[redacted]' } });
    // The token's header by name only, marked as the credential that held.
    expect((detail.headers as Record<string, string>).authorization).toBe('[masked]');
    expect(detail.credentials).toEqual({ authorization: { verified: true } });
    expect(JSON.stringify(detail)).not.toContain(HOOK_TOKEN);
    expect((detail.events as { id: string; text: string }[])[0]).toMatchObject({
      id: wake.body.eventId,
      text: 'hello',
    });

    const note = (await w.admin(`/api/requests/${listed[1]?.id}`)).body;
    expect(note).toMatchObject({ mappingId: 'note', truncated: true, redacted: true });
    expect((note.body as string).length).toBe(2048);
    expect(note.body).toContain('"secret":"[redacted]","keep":"k"');

    const agentDetail = (await w.admin(`/api/requests/${listed[3]?.id}`)).body;
    expect((agentDetail.runs as { runId: string }[])[0]?.runId).toBe(agent.body.runId);

    const failed = (await w.admin('/api/requests?failed=true')).body.requests as { status: number }[];
    expect(failed.map((r) => r.status)).toEqual([401, 400]);
    expect(((await w.admin('/api/requests?status=2xx&path=wake')).body.requests as unknown[]).length).toBe(1);
    const page1 = (await w.admin('/api/requests?limit=4')).body;
    expect((page1.requests as unknown[]).length).toBe(4);
    const page2 = (await w.admin(`/api/requests?limit=4&cursor=${page1.nextCursor}`)).body;
    expect((page2.requests as { id: string }[]).map((r) => r.id)).toEqual(['req-wake-1']);
    expect(page2.nextCursor).toBeNull();
    expect((await w.admin('/api/requests?status=abc')).body.code).toBe('INVALID_FIELD');
    expect((await w.admin('/api/requests/nope')).status).toBe(404);
    expect((await call(`${w.hookd.url}/api/requests`, { method: 'GET' })).status).toBe(401);
  });

  it('keeps no piece of an invalid body in the answer, the record or the admin API: a redacted value stays out', async () => {
    // V8's message quoted the text around the error into the reason: `..."{"number":hunter2Qz7"...`.
    const w = await world();
    const headers = { ...HOOK, 'content-type': 'application/json', 'x-request-id': 'bad-json-secret' };
    const body = '{"text":"x","card":{"number":hunter2Qz7xK9}}';
    const answer = await call(`${w.hookd.url}/hooks/wake`, { headers, body });
    const record = await until(async () => {
      const found = await w.admin('/api/requests/bad-json-secret');
      return found.status === 200 ? found : undefined;
    }, 'the record');
    const pieces = Array.from({ length: 'hunter2Qz7xK9'.length - 3 }, (_, i) => 'hunter2Qz7xK9'.slice(i, i + 4));
    for (const seen of [answer.text, record.text, (await w.admin('/api/requests')).text, w.hookd.stdout()]) {
      expect(pieces.filter((piece) => seen.includes(piece))).toEqual([]);
    }
    const reason = 'invalid JSON body: unexpected character at line 1, column 30';
    expect(answer).toMatchObject({ status: 400, body: { code: 'INVALID_JSON', error: reason } });
    expect(record.body).toMatchObject({ status: 400, code: 'INVALID_JSON', reason, body: '', redacted: true });
  });

  it('replays a failed transform request once the transform is fixed on disk, and a request whose mapping is gone is 409', async () => {
    const w = await world();
    // A sender's own request id, as long as hookd takes one (128 characters), opens and replays.
    const failed = await w.hook('flaky', { n: 7 }, { ...HOOK, 'x-request-id': `trace-${'x'.repeat(122)}` });
    expect(failed.status).toBe(500);
    const id = failed.headers['x-request-id'] as string;
    expect(id).toHaveLength(128);
    expect((await w.admin(`/api/requests/${id}`)).body).toMatchObject({
      status: 500,
      code: 'TRANSFORM_FAILED',
      mappingId: 'flaky',
    });

    writeFileSync(join(w.dir, 'transforms/flaky.ts'), FIXED);
    const replayed = await until(async () => {
      const answer = await w.admin(`/api/requests/${id}/replay`, 'POST');
      return answer.status === 202 ? answer : undefined;
    }, 'the fixed transform to be reloaded');
    expect(replayed.headers['replay-of']).toBe(id);
    const run = await runDone(w, replayed.body.runId as string);
    expect(run).toMatchObject({ status: 'ok', output: 'the reply' });
    const replayRecord = (await w.admin(`/api/requests/${replayed.headers['x-request-id']}`)).body;
    expect(replayRecord).toMatchObject({ replayOf: id, status: 202, mappingId: 'flaky' });
    expect(w.model.requests.some((r) => JSON.stringify(r).includes('fixed 7'))).toBe(true);

    // The original and its kept failure count as replayed: `replay --failed` skips them.
    await until(async () => (await w.admin(`/api/requests/${id}`)).body.replayedAt, 'replayedAt');
    const pending = (await w.admin('/api/requests?failed=true&replayed=false&replays=false')).body
      .requests as unknown[];
    expect(pending).toEqual([]);
    const db = new Database(join(w.dir, 'data/hookd.db'), { readonly: true });
    expect(db.prepare('SELECT COUNT(*) AS n FROM failed_requests WHERE replayed_at IS NOT NULL').get()).toEqual({
      n: 1,
    });
    db.close();

    await w.restart(MAPPINGS.filter((m) => m.id !== 'flaky'));
    const gone = await w.admin(`/api/requests/${id}/replay`, 'POST');
    expect(gone.status).toBe(409);
    expect(gone.body.code).toBe('REPLAY_MAPPING_GONE');
    expect((await w.admin('/api/requests/no-such-request/replay', 'POST')).status).toBe(404);
    // So does a session key as long as hookd takes (256 characters, 1,500 percent-encoded).
    const sessionKey = `hook:${'é'.repeat(251)}`;
    const agent = await w.hook('agent', { message: 'long key', sessionKey, deliver: false });
    expect(agent.status).toBe(202);
    await until(
      async () => ((await w.admin(`/api/runs/${agent.body.runId}`)).body.status === 'ok' ? true : undefined),
      'the long key’s run to finish',
    );
    // Its turn is written once the model answered: wait for that commit.
    const session = () => w.admin(`/api/sessions/${encodeURIComponent(sessionKey)}`);
    await expect.poll(async () => (await session()).status).toBe(200);
    expect((await session()).body.messages).toHaveLength(2);
  });

  it('redelivers a failed chat delivery, once, and only a failed one', async () => {
    const w = await world();
    w.chat.refuseNext(1);
    const res = await w.hook('agent', { message: 'tell me', deliver: true, channel: 'chatnet', to: '42' });
    const runId = res.body.runId as string;
    const run = await runDone(w, runId);
    expect(run.delivery).toMatchObject({ status: 'failed', channel: 'chatnet', to: '42' });
    const failedRuns = (await w.admin('/api/runs?status=failed')).body.runs as { runId: string }[];
    expect(failedRuns.map((r) => r.runId)).toEqual([runId]);

    const again = await w.admin(`/api/runs/${runId}/redeliver`, 'POST');
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ runId, delivery: { status: 'sent', channel: 'chatnet', to: '42' } });
    expect(w.chat.sent.map((m) => m.text)).toEqual(['the reply']);
    expect((await w.admin(`/api/runs/${runId}`)).body.delivery).toMatchObject({ status: 'sent' });
    const twice = await w.admin(`/api/runs/${runId}/redeliver`, 'POST');
    expect(twice.status).toBe(409);
    expect(twice.body.code).toBe('NOT_REDELIVERABLE');
    // One summary in the main session: the redelivery repeated nothing else.
    const events = (await w.admin('/api/main/events')).body.events as { text: string }[];
    expect(events.filter((e) => e.text.startsWith('Hook'))).toHaveLength(1);
    expect((await w.admin('/api/runs?status=bogus')).body.code).toBe('INVALID_FIELD');
  });

  it('streams new requests and run updates as Server-Sent Events', async () => {
    const w = await world();
    const stream = await request(`${w.hookd.url}/api/stream`, { headers: ADMIN });
    expect(stream.statusCode).toBe(200);
    expect(stream.headers['content-type']).toContain('text/event-stream');
    expect(stream.headers['x-content-type-options']).toBe('nosniff');
    let seen = '';
    const done = new Promise<void>((resolve) => {
      stream.body.on('data', (chunk: Buffer) => {
        seen += chunk.toString();
        if (seen.includes('event: request') && /"status":"ok"/.test(seen)) resolve();
      });
    });
    const started = Date.now();
    const res = await w.hook('agent', { message: 'live', deliver: false });
    await done;
    // Live: a stream that only flushed at its ping would show it 15 s later.
    expect(Date.now() - started).toBeLessThan(5000);
    const requestEvent = /event: request\ndata: (.*)\n\n/.exec(seen)?.[1] as string;
    expect(JSON.parse(requestEvent)).toMatchObject({ path: 'agent', status: 202, runIds: [res.body.runId] });
    expect(seen).toContain(`"runId":"${res.body.runId}"`);
    // An open stream does not hold the gateway's stop (it is ended, not waited for).
    const stopping = Date.now();
    await w.hookd.stop();
    // A stop that waited for the stream would wait for ever: it pings every 15 s.
    expect(Date.now() - stopping).toBeLessThan(10_000);
    stream.body.destroy();
  });
});
