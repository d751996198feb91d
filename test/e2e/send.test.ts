import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeModel } from '../helpers/fake-model.js';
import { makeTempDir, runHookd, startHookd, writeConfig } from '../helpers/hookd-process.js';

const TOKEN = 'send-hook-token-0123456789abcdef';
const GATEWAY = 'send-gateway-token-0123456789abcdef';
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  // Last made, first undone: a gateway stops before its folder goes.
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

describe('hookd send', () => {
  it('sends a correctly signed delivery for a GitHub-verified mapping and prints the run it became', async () => {
    const temp = makeTempDir();
    cleanups.push(temp.cleanup);
    const model = await startFakeModel(() => 'CI is red on main; the last push broke it.');
    cleanups.push(() => model.close());
    const config = {
      gateway: { auth: { token: GATEWAY } },
      hooks: {
        enabled: true,
        token: TOKEN,
        mappings: [
          {
            id: 'github',
            match: { path: 'github' },
            verify: { scheme: 'github', secret: 'gh-fixture-secret' },
            messageTemplate: '{{headers.x-github-event}} to {{repository.full_name}} by {{pusher.name}}',
            deliver: false,
          },
        ],
      },
      agents: { defaults: { model: 'fake/m', heartbeat: { every: '0' } } },
      models: { providers: { fake: { baseUrl: model.url, api: 'openai-chat' } } },
    };
    const hookd = await startHookd({ dir: temp.dir, config });
    cleanups.push(() => hookd.stop());
    const fixture = join(temp.dir, 'push.json');
    writeFileSync(
      fixture,
      JSON.stringify({
        headers: { 'X-GitHub-Event': 'push', 'Content-Type': 'application/json' },
        body: { repository: { full_name: 'octo/hello' }, pusher: { name: 'mona' } },
      }),
    );
    const file = writeConfig(temp.dir, config);
    const sent = await runHookd(['send', 'github', '--fixture', fixture, '--url', hookd.url, '--config', file], {
      cwd: temp.dir,
    });
    expect(sent.stderr).toBe('');
    expect(sent.code).toBe(0);
    expect(sent.stdout).toMatch(new RegExp(`^POST ${hookd.url}/hooks/github → 202 \\{"ok":true,"runId":`, 'm'));
    expect(sent.stdout).toMatch(/^run [0-9a-f-]+: ok; delivery skipped \(deliver is false\)\n {2}CI is red on main/m);
    expect(model.requests.some((r) => JSON.stringify(r).includes('push to octo/hello by mona'))).toBe(true);

    // The same delivery with another secret is refused, and send says so with a non-zero exit.
    // (A config of its own: the gateway reloads the file it serves when that changes.)
    const elsewhere = makeTempDir();
    cleanups.push(elsewhere.cleanup);
    const wrong = writeConfig(elsewhere.dir, {
      ...config,
      hooks: {
        ...config.hooks,
        mappings: [{ ...config.hooks.mappings[0], verify: { scheme: 'github', secret: 'other' } }],
      },
    });
    const refused = await runHookd(['send', 'github', '--fixture', fixture, '--url', hookd.url, '--config', wrong], {
      cwd: temp.dir,
    });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toMatch(/→ 401 .*no signature matched/);
    expect(refused.stdout).toContain('"code":"SIGNATURE_INVALID"');
  });

  it('uses the hook token for a mapping without a scheme, and names the known hooks for an unknown one', async () => {
    const temp = makeTempDir();
    cleanups.push(temp.cleanup);
    const config = {
      hooks: {
        enabled: true,
        token: TOKEN,
        mappings: [{ match: { path: 'ping' }, action: 'wake', textTemplate: 'ping {{n}}', wakeMode: 'next-heartbeat' }],
      },
      agents: { defaults: { heartbeat: { every: '0' } } },
    };
    const hookd = await startHookd({ dir: temp.dir, config });
    cleanups.push(() => hookd.stop());
    const file = writeConfig(temp.dir, config);
    const sent = await runHookd(['send', 'ping', '--payload', '-', '--url', hookd.url, '--config', file], {
      cwd: temp.dir,
      input: '{"n": 7}',
    });
    expect(sent.code).toBe(0);
    expect(sent.stdout).toMatch(/→ 200 \{"ok":true,"mode":"next-heartbeat","eventId":"[^"]+"\}/);
    const unknown = await runHookd(['send', 'pnig', '--url', hookd.url, '--config', file], { cwd: temp.dir });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/no mapping for hook pnig \(known: wake, agent, ping\)/);
  });
});
