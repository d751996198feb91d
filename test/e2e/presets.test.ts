import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sign } from '@octokit/webhooks-methods';
import { afterEach, describe, expect, it } from 'vitest';
import { isHeartbeat, lastUser, startFakeModel } from '../helpers/fake-model.js';
import { makeTempDir, ROOT, startHookd } from '../helpers/hookd-process.js';
import { call } from '../helpers/http.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

const fixture = (preset: string, name: string) =>
  JSON.parse(readFileSync(join(ROOT, 'presets', preset, 'fixtures', name), 'utf8')) as {
    headers: Record<string, string>;
    body: unknown;
  };

describe('the github preset end to end (issue 14)', () => {
  it("runs a recorded push signed by GitHub's own library, refuses a tampered body, and dedupes a repeated delivery", async () => {
    const temp = makeTempDir();
    cleanups.push(temp.cleanup);
    const model = await startFakeModel(() => 'Two commits, both harmless.');
    cleanups.push(() => model.close());
    const secret = "It's a Secret to Everybody";
    // Enabling github with a secret: three lines of config.
    const hookd = await startHookd({
      dir: temp.dir,
      config: {
        hooks: { enabled: true, token: 'preset-hook-token-0123456789', presets: [{ name: 'github', secret }] },
        agents: { defaults: { model: 'fake/m', heartbeat: { every: '0' } } },
        models: { providers: { fake: { baseUrl: model.url, api: 'openai-chat' } } },
      },
    });
    cleanups.push(() => hookd.stop());
    const { headers, body } = fixture('github', 'push.json');
    const raw = JSON.stringify(body);
    const post = async (text: string, signature: string) =>
      call(`${hookd.url}/hooks/github`, { headers: { ...headers, 'X-Hub-Signature-256': signature }, body: text });

    const signature = await sign(secret, raw);
    const first = await post(raw, signature);
    expect(first.status).toBe(202);
    await expect.poll(() => model.requests.filter((r) => !isHeartbeat(r)).length).toBe(1);
    const turn = lastUser(model.requests.find((r) => !isHeartbeat(r)));
    expect(turn).toContain('monalisa pushed 2 commits to main of octocat/Hello-World');
    expect(turn).toContain('- Fix the footer links (b2c9a4e)');

    const tampered = await post(raw.replace('Update README', 'Update README!'), signature);
    expect(tampered.status).toBe(401);
    expect(tampered.body).toMatchObject({ code: 'SIGNATURE_INVALID' });

    const again = await post(raw, signature);
    expect(again.status).toBe(202);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(model.requests.filter((r) => !isHeartbeat(r))).toHaveLength(1);

    const ping = fixture('github', 'ping.json');
    const pingRaw = JSON.stringify(ping.body);
    const pong = await call(`${hookd.url}/hooks/github`, {
      headers: { ...ping.headers, 'X-Hub-Signature-256': await sign(secret, pingRaw) },
      body: pingRaw,
    });
    expect(pong.status).toBe(204);
  });
});
