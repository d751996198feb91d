import { cpSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { isHeartbeat, lastUser, startFakeModel } from '../helpers/fake-model.js';
import { makeTempDir, ROOT, runHookd, startHookd, writeConfig } from '../helpers/hookd-process.js';
import { call } from '../helpers/http.js';

const TOKEN = 'transform-hook-token-0123456789';
const HOOK = { authorization: `Bearer ${TOKEN}` };

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

function transformsCopy() {
  const temp = makeTempDir();
  cleanups.push(temp.cleanup);
  cpSync(join(ROOT, 'test/fixtures/transforms'), join(temp.dir, 'transforms'), { recursive: true });
  return temp.dir;
}

const mapping = (path: string, module: string, exportName?: string, extra: object = {}) => ({
  match: { path },
  transform: { module, ...(exportName ? { export: exportName } : {}) },
  ...extra,
});

describe('transforms end to end', () => {
  it('runs a TypeScript transform to an agent action; failures are 500 TRANSFORM_FAILED, kept, and harmless to others', async () => {
    const dir = transformsCopy();
    const model = await startFakeModel((r) => (isHeartbeat(r) ? 'HEARTBEAT_OK' : 'seen'));
    cleanups.push(() => model.close());
    const hookd = await startHookd({
      dir,
      config: {
        hooks: {
          enabled: true,
          token: TOKEN,
          transformsDir: 'transforms',
          transforms: { timeoutMs: 500 },
          mappings: [
            mapping('github', 'typed.ts', undefined, { wakeMode: 'next-heartbeat' }),
            mapping('loop', 'hostile.ts', 'loop'),
            mapping('throws', 'hostile.ts', 'throws'),
            mapping('escape', 'hostile.ts', 'constructorEscape'),
            mapping('skip', 'hostile.ts', 'skip'),
            mapping('keep', 'hostile.ts', 'keep', { messageTemplate: 'templated {{n}}', wakeMode: 'next-heartbeat' }),
            mapping('alerts', 'hostile.ts', 'toWake', { messageTemplate: 'unused' }),
          ],
        },
        agents: { defaults: { model: 'fake/m', heartbeat: { every: '0' } } },
        models: { providers: { fake: { baseUrl: model.url, api: 'openai-chat' } } },
      },
    });
    cleanups.push(() => hookd.stop());
    const post = (path: string, json: unknown, headers: Record<string, string> = {}) =>
      call(`${hookd.url}/hooks/${path}?via=test`, { headers: { ...HOOK, ...headers }, json });

    const push = { repository: { full_name: 'acme/site' }, pusher: { name: 'ada' }, commits: [{ message: 'x' }] };
    const ok = await post('github', push, { 'x-github-event': 'push' });
    expect(ok.status).toBe(202);
    expect(ok.body.sessionKey).toBe('hook:gh:acme/site');
    await expect.poll(() => model.requests.length).toBe(1);
    expect(lastUser(model.requests[0])).toContain('push: ada pushed 1 commit to acme/site');

    const started = Date.now();
    const looping = post('loop', { n: 1 });
    const meanwhile = await post('github', push, { 'x-github-event': 'push' });
    expect(meanwhile.status).toBe(202);
    const loop = await looping;
    expect(loop.status).toBe(500);
    expect(loop.body).toEqual({
      ok: false,
      code: 'TRANSFORM_FAILED',
      error: 'transform failed: timed out after 500 ms',
    });
    expect(Date.now() - started).toBeLessThan(1500);

    const thrown = await post('throws', { secret: 'x' });
    const error = 'transform failed: hostile.ts:46:9: cannot handle this payload';
    expect(thrown.body).toEqual({ ok: false, code: 'TRANSFORM_FAILED', error });
    const escaped = await post('escape', {});
    expect(escaped.status).toBe(500);
    expect(escaped.body.error).toMatch(/^transform failed: hostile\.ts:\d+:\d+: process is not defined$/);

    expect((await post('skip', {})).status).toBe(204);
    const keep = await post('keep', { n: 5 });
    expect(keep.status).toBe(202);
    const alert = await post('alerts', { alert: 'disk' });
    expect(alert.status).toBe(200);
    expect(alert.body).toMatchObject({ ok: true, mode: 'now', eventId: expect.any(String) });
    await expect.poll(() => model.requests.some((r) => lastUser(r).includes('templated 5'))).toBe(true);

    const db = new Database(join(dir, 'data/hookd.db'), { readonly: true });
    const failures = db
      .prepare('SELECT sub_path, url, headers, body, code, error FROM failed_requests ORDER BY seq')
      .all() as {
      sub_path: string;
      url: string;
      headers: string;
      body: Buffer;
      code: string;
      error: string;
    }[];
    db.close();
    expect(failures.map((f) => f.sub_path)).toEqual(['loop', 'throws', 'escape']);
    expect(failures[1]).toMatchObject({
      code: 'TRANSFORM_FAILED',
      // The author's frames and code frame are kept with the message (docs/transforms.md#when-a-transform-throws).
      error: expect.stringMatching(
        /^transform failed: hostile\.ts:46:9: cannot .*\n {4}at throws .*\n> 46 \| {3}throw /s,
      ),
      url: '/hooks/throws?via=test',
    });
    expect(failures[1]?.body.toString()).toBe('{"secret":"x"}');
    expect(failures[1]?.headers).not.toContain(TOKEN);
  });

  it('bounds what a hostile result, error or console line costs past the sandbox', async () => {
    const dir = transformsCopy();
    const hookd = await startHookd({
      dir,
      config: {
        log: { level: 'debug' },
        hooks: {
          enabled: true,
          token: TOKEN,
          transformsDir: 'transforms',
          mappings: [
            { id: 'results', ...mapping('results', 'hostile.ts', 'notJsonIfBad', { wakeMode: 'next-heartbeat' }) },
            { id: 'huge', ...mapping('huge', 'hostile.ts', 'hugeMessage') },
            { id: 'relabel', ...mapping('relabel', 'hostile.ts', 'relabel') },
          ],
        },
        agents: { defaults: { heartbeat: { every: '0' } } },
      },
    });
    cleanups.push(() => hookd.stop());
    const post = (path: string, json: unknown) => call(`${hookd.url}/hooks/${path}`, { headers: HOOK, json });

    // A result that is not JSON fails this request alone: kept for replay, and the same
    // mapping (its isolate) answers the next request.
    const bad = await post('results', { bad: true });
    expect(bad.status).toBe(500);
    expect(bad.body).toMatchObject({ code: 'TRANSFORM_FAILED', error: expect.stringMatching(/not JSON/) });
    expect((await post('results', { bad: false })).status).toBe(200);
    expect((await post('results', { bad: true })).status).toBe(500);
    expect((await post('results', {})).status).toBe(200);

    // A 5 MB thrown message: a short answer, a short stored error, short log lines.
    const huge = await post('huge', {});
    expect(huge.status).toBe(500);
    expect(huge.body.code).toBe('TRANSFORM_FAILED');
    expect(JSON.stringify(huge.body).length).toBeLessThan(2048);

    // Console lines keep the host's level and the mapping's own binding.
    expect((await post('relabel', {})).status).toBe(204);

    const db = new Database(join(dir, 'data/hookd.db'), { readonly: true });
    const failures = db.prepare('SELECT sub_path, code, error FROM failed_requests ORDER BY seq').all() as {
      sub_path: string;
      code: string;
      error: string;
    }[];
    db.close();
    expect(failures.map((f) => [f.sub_path, f.code])).toEqual([
      ['results', 'TRANSFORM_FAILED'],
      ['results', 'TRANSFORM_FAILED'],
      ['huge', 'TRANSFORM_FAILED'],
    ]);
    expect(failures[2]?.error.length).toBeLessThan(2048);

    await expect.poll(() => hookd.stdout().includes('relabelled')).toBe(true);
    const lines = hookd.stdout().trim().split('\n');
    expect(Math.max(...lines.map((line) => line.length))).toBeLessThan(16 * 1024);
    const fromConsole = lines
      .map((line) => JSON.parse(line) as { level: number; mapping?: string; source?: string; msg: string })
      .filter((line) => line.source === 'console');
    expect(fromConsole.map((line) => [line.level, line.msg])).toEqual([
      [30, '{"mapping":"other","level":60,"msg":"relabelled"}'],
      [50, 'level fatal {"level":"fatal"}'],
    ]);
    for (const line of fromConsole) expect(line.mapping).not.toBe('other');
  });

  it('refuses to serve and fails hookd check on a compile error, with file:line:col', async () => {
    const dir = transformsCopy();
    const file = writeConfig(dir, { hooks: { enabled: true, token: TOKEN, mappings: [mapping('b', 'broken.ts')] } });
    const check = await runHookd(['check', '--config', file]);
    expect(check.code).toBe(1);
    // Relative to the folder check runs in, or absolute outside it.
    expect(check.stderr).toMatch(
      /transforms\/broken\.ts:2:37: error: hooks\.mappings\[0\]\.transform\.module: Expected "}" but found ";"/,
    );
    const serve = await runHookd(['serve', '--config', file]);
    expect(serve.code).toBe(1);
    expect(serve.stderr).toContain('broken.ts:2:37');
  });

  it('hookd try runs transforms too', async () => {
    const dir = transformsCopy();
    const file = writeConfig(dir, {
      hooks: { enabled: true, token: TOKEN, mappings: [mapping('alerts', 'hostile.ts', 'toWake')] },
    });
    const payload = join(dir, 'p.json');
    cpSync(join(ROOT, 'test/fixtures/github-push.json'), payload);
    const result = await runHookd(['try', 'alerts', '--payload', payload, '--config', file]);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ actions: [{ kind: 'wake', text: 'alert: undefined' }] });
    // `--payload -` reads standard input (it was once ENOENT).
    const piped = await runHookd(['try', 'alerts', '--payload', '-', '--config', file], {
      input: JSON.stringify({ alert: 'disk full' }),
    });
    expect(piped.code).toBe(0);
    expect(JSON.parse(piped.stdout)).toMatchObject({ actions: [{ kind: 'wake', text: 'alert: disk full' }] });
  });

  it('keeps /healthz and /hooks/agent answering while four clients hit a transform that spins 3 s', async () => {
    const dir = transformsCopy();
    const model = await startFakeModel(() => 'HEARTBEAT_OK');
    cleanups.push(() => model.close());
    const hookd = await startHookd({
      dir,
      config: {
        hooks: {
          enabled: true,
          token: TOKEN,
          transforms: { timeoutMs: 3500 },
          mappings: [mapping('spin', 'hostile.ts', 'spin')],
        },
        agents: { defaults: { model: 'fake/m', heartbeat: { every: '0' } } },
        models: { providers: { fake: { baseUrl: model.url, api: 'openai-chat' } } },
      },
    });
    cleanups.push(() => hookd.stop());
    // Four calls at once, each spinning 3 s: one per spare core runs, the others wait within
    // their budget, then time out (500) or are refused (503 TRANSFORM_BUSY).
    const spinStatuses: number[] = [];
    const spins = Array.from({ length: 4 }, async () => {
      spinStatuses.push((await call(`${hookd.url}/hooks/spin`, { headers: HOOK, json: { ms: 3000 } })).status);
    });
    // Meanwhile, /healthz and /hooks/agent, one after the other, until a spinning call answers.
    // Held on the event loop, they could only be answered after a spin ended; off it, they are
    // answered while the first spins, whatever the load (a probe's time is shown, not bounded).
    const took: number[] = [];
    while (spinStatuses.length === 0 && took.length < 20) {
      const started = performance.now();
      const health = await call(`${hookd.url}/healthz`, { method: 'GET' });
      const agent = await call(`${hookd.url}/hooks/agent`, { headers: HOOK, json: { message: 'hi', deliver: false } });
      expect([health.status, agent.status]).toEqual([200, 202]);
      if (spinStatuses.length === 0) took.push(performance.now() - started);
    }
    await Promise.all(spins);
    expect(took.length).toBeGreaterThanOrEqual(5);
    expect(spinStatuses).toContain(204);
    for (const status of spinStatuses) expect([204, 500, 503]).toContain(status);
    took.sort((a, b) => a - b);
    process.stdout.write(
      `while spinning: ${took.length} probes answered, median ${Math.round(took[Math.floor(took.length / 2)] ?? 0)} ms\n`,
    );
  });

  it('answers 503 TRANSFORM_BUSY with Retry-After over maxInFlight and a bounded wait, and keeps nothing for replay', async () => {
    const dir = transformsCopy();
    const hookd = await startHookd({
      dir,
      config: {
        hooks: {
          enabled: true,
          token: TOKEN,
          transforms: { maxInFlight: 1, timeoutMs: 3000 },
          mappings: [mapping('spin', 'hostile.ts', 'spin')],
        },
      },
    });
    cleanups.push(() => hookd.stop());
    // Three calls at once, each spinning 1 s: whichever runs first, one waits behind it
    // (maxInFlight 1, one waiter) and then runs within its budget; the third is refused at once.
    const spin = () => call(`${hookd.url}/hooks/spin`, { headers: HOOK, json: { ms: 1000 } });
    const answers = await Promise.all([spin(), spin(), spin()]);
    const busy = answers.filter((a) => a.status === 503);
    expect(busy).toHaveLength(1);
    // Retry-After is the budget, in seconds.
    expect(busy[0]?.headers['retry-after']).toBe('3');
    expect(busy[0]?.body).toEqual({
      ok: false,
      code: 'TRANSFORM_BUSY',
      error:
        'the transform of mapping hooks.mappings[0] did not start: 1 calls already run (hooks.transforms.maxInFlight); retry later',
    });
    expect(answers.filter((a) => a.status === 204)).toHaveLength(2);
    const db = new Database(join(dir, 'data/hookd.db'), { readonly: true });
    expect(db.prepare('SELECT count(*) AS n FROM failed_requests').get()).toEqual({ n: 0 });
    db.close();
  });
});
