import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeModel } from '../helpers/fake-model.js';
import { makeTempDir, runHookd, startHookd, writeConfig } from '../helpers/hookd-process.js';
import { call, until } from '../helpers/http.js';

const TOKEN = 'cli-log-hook-token-0123456789';
const GATEWAY = 'cli-log-gateway-token-0123456789';
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

describe('hookd requests, replay and runs (docs/runtime.md#request-log-and-replay)', () => {
  it('lists a failed request, replays it with --failed once the transform is fixed, and lists the run', async () => {
    const temp = makeTempDir();
    cleanups.push(temp.cleanup);
    mkdirSync(join(temp.dir, 'transforms'));
    writeFileSync(
      join(temp.dir, 'transforms/t.ts'),
      `export default () => { throw new Error('broken on purpose'); };\n`,
    );
    const model = await startFakeModel(() => 'replayed fine');
    cleanups.push(() => model.close());
    const config = {
      gateway: { auth: { token: GATEWAY } },
      hooks: {
        enabled: true,
        token: TOKEN,
        mappings: [{ id: 'ci', match: { path: 'ci' }, transform: { module: 't.ts' }, name: 'CI', deliver: false }],
      },
      agents: { defaults: { model: 'fake/m', heartbeat: { every: '0' } } },
      models: { providers: { fake: { baseUrl: model.url, api: 'openai-chat' } } },
    };
    const hookd = await startHookd({ dir: temp.dir, config });
    cleanups.push(() => hookd.stop());
    const file = writeConfig(temp.dir, config);
    const cli = (...args: string[]) => runHookd([...args, '--config', file, '--url', hookd.url], { cwd: temp.dir });

    const sent = await call(`${hookd.url}/hooks/ci`, { headers: { authorization: `Bearer ${TOKEN}` }, json: { n: 1 } });
    expect(sent.status).toBe(500);
    const id = sent.headers['x-request-id'] as string;

    const listed = await cli('requests', '--failed');
    expect(listed.code).toBe(0);
    const [header, row] = listed.stdout.trim().split('\n');
    expect(header).toMatch(/^RECEIVED\s+ID\s+PATH\s+EVENT\s+STATUS\s+CODE\s+MAPPING\s+MS\s+ACTIONS\s+REASON$/);
    expect(row).toContain(id);
    // The reason column says why it failed.
    expect(row).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d {2}/);
    expect(row).toMatch(/ci\s+-\s+500\s+TRANSFORM_FAILED\s+ci\s+\d+\s+-\s+.*broken on purpose/);

    // Still broken: the replay answers what a live request would, and the command fails.
    const stillBroken = await cli('replay', id);
    expect(stillBroken.code).toBe(1);
    expect(stillBroken.stdout).toContain(`${id} → 500`);
    expect(stillBroken.stdout).toContain('broken on purpose');

    writeFileSync(
      join(temp.dir, 'transforms/t.ts'),
      `export default ({ payload }: { payload: { n: number } }) => ({ kind: 'agent', message: 'build ' + payload.n });\n`,
    );
    // Replayed once the gateway has reloaded the fixed transform (it says so in its log).
    await until(async () => (hookd.stdout().includes('"msg":"transform reloaded"') ? true : undefined), 'the reload');
    const replayed = await cli('replay', '--failed', '--since', '1h');
    expect(replayed.code).toBe(0);
    expect(replayed.stdout).toMatch(new RegExp(`^${id} → 202 \\(replay [^)]+\\) \\{"ok":true,"runId"`));
    // Replayed once: a second --failed finds nothing.
    expect((await cli('replay', '--failed')).stdout.trim()).toBe('nothing to replay');
    // By id again: nothing runs, the first run's answer comes back; --force runs it anew, and says so.
    const again = await cli('replay', id);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('(already run: the answer of its first run; --force runs it anew)');
    const forced = await cli('replay', id, '--force');
    expect(forced.code).toBe(0);
    const runIdOf = (stdout: string) => /"runId":"([^"]+)"/.exec(stdout)?.[1];
    expect(forced.stdout).not.toContain('already run');
    expect(runIdOf(forced.stdout)).toEqual(expect.any(String));
    expect(runIdOf(forced.stdout)).not.toBe(runIdOf(again.stdout));
    expect((await cli('requests')).stdout).toContain(`forced replay of ${id}`);

    // Listed once the replay's run has ended.
    const admin = { method: 'GET', headers: { authorization: `Bearer ${GATEWAY}` } };
    await until(async () => {
      const run = await call(`${hookd.url}/api/runs/${runIdOf(replayed.stdout)}`, admin);
      return run.body.status === 'ok' ? true : undefined;
    }, 'the replayed run to end');
    const runs = (await cli('runs')).stdout;
    expect(runs.split('\n')[0]).toMatch(/^CREATED\s+RUN\s+STATUS\s+NAME\s+MODEL\s+DELIVERY$/);
    expect(runs).toMatch(/ ok\s+CI\s+fake\/m\s+skipped \(deliver is false\)/);
    const json = JSON.parse((await cli('requests', '--json', '--limit', '10')).stdout) as { requests: unknown[] };
    expect(json.requests.length).toBeGreaterThanOrEqual(3);

    // From a folder without a config (in temp.dir, ./hookd.json5 would give the right token).
    const elsewhere = makeTempDir();
    cleanups.push(elsewhere.cleanup);
    const noToken = await runHookd(['runs', '--url', hookd.url], {
      cwd: elsewhere.dir,
      env: { HOOKD_GATEWAY_TOKEN: 'wrong-token-0123456789' },
    });
    expect(noToken.code).toBe(1);
    expect(noToken.stderr).toContain('401');

    // A replay refused before running (409) made no record: no replay id is printed.
    const refused = await call(`${hookd.url}/hooks/ci`, {
      headers: { authorization: 'Bearer not-the-hook-token-0123' },
      json: { n: 2 },
    });
    const refusedId = refused.headers['x-request-id'] as string;
    let notAllowed = await cli('replay', refusedId);
    for (let i = 0; i < 40 && !notAllowed.stdout.includes('409'); i++) {
      await new Promise((r) => setTimeout(r, 100));
      notAllowed = await cli('replay', refusedId);
    }
    expect(notAllowed.code).toBe(1);
    expect(notAllowed.stdout).toMatch(new RegExp(`^${refusedId} → 409 REPLAY_NOT_ALLOWED: `));
    expect(notAllowed.stdout).not.toContain('(replay');
  });

  it('resolve only the config keys they read: an unrelated ${NAME} not set is no error for runs, requests, replay and send', async () => {
    const temp = makeTempDir();
    cleanups.push(temp.cleanup);
    const note = { id: 'note', match: { path: 'note' }, action: 'wake', textTemplate: 'note {{n}}' };
    const hookd = await startHookd({
      dir: temp.dir,
      config: {
        gateway: { auth: { token: GATEWAY } },
        hooks: { enabled: true, token: TOKEN, mappings: [note] },
        agents: { defaults: { heartbeat: { every: '0' } } },
      },
    });
    cleanups.push(() => hookd.stop());
    // The file `serve` would run with elsewhere: every secret from the environment.
    const file = join(temp.dir, 'cli.json5');
    writeFileSync(
      file,
      JSON.stringify({
        gateway: { auth: { token: '${GATEWAY_TOKEN}' } },
        hooks: {
          enabled: true,
          token: '${HOOK_TOKEN}',
          mappings: [
            note,
            {
              id: 'gh',
              match: { path: 'gh' },
              textTemplate: 'x',
              verify: { scheme: 'github', secret: '${GH_SECRET}' },
            },
          ],
        },
        channels: { chatnet: { apiBase: 'http://127.0.0.1:9', botToken: '${CHAT_BOT_TOKEN}' } },
      }),
    );
    const env = { GATEWAY_TOKEN: GATEWAY, HOOK_TOKEN: TOKEN };
    const cli = (args: string[], environment: NodeJS.ProcessEnv = env) =>
      runHookd([...args, '--config', file, '--url', hookd.url], { cwd: temp.dir, env: environment });

    const sent = await cli(['send', 'note', '--json']);
    expect(sent.stderr).toBe('');
    expect(sent.code).toBe(0);
    expect(JSON.parse(sent.stdout)).toMatchObject({ status: 200, answer: { ok: true, eventId: expect.any(String) } });
    const requests = await cli(['requests', '--json']);
    expect(requests.code).toBe(0);
    const [logged] = (JSON.parse(requests.stdout) as { requests: { id: string; path: string }[] }).requests;
    expect(logged?.path).toBe('note');
    const replayed = await cli(['replay', logged?.id as string]);
    expect(replayed.stdout).toContain(`${logged?.id} → 200`);
    expect(replayed.code).toBe(0);
    expect((await cli(['runs'])).code).toBe(0);

    // A key a command reads is still needed, and named: the gateway token, a mapping's secret.
    const withoutGateway = await cli(['runs'], { HOOK_TOKEN: TOKEN });
    expect(withoutGateway.code).toBe(1);
    expect(withoutGateway.stderr).toContain('gateway.auth.token: environment variable GATEWAY_TOKEN is not set');
    expect(withoutGateway.stderr).not.toMatch(/CHAT_BOT_TOKEN|GH_SECRET|HOOK_TOKEN/);
    const unsigned = await cli(['send', 'gh']);
    expect(unsigned.code).toBe(1);
    expect(unsigned.stderr).toContain('hooks.mappings[1].verify.secret: environment variable GH_SECRET is not set');
    // Strict as before where every key is read: serve's check.
    const checked = await runHookd(['check', '--config', file], { cwd: temp.dir, env });
    expect(checked.stderr).toContain('channels.chatnet.botToken: environment variable CHAT_BOT_TOKEN is not set');
  });
});
