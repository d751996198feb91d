import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { signDelivery } from '../../src/schemes/index.js';
import type { RequestView } from '../../src/views.js';
import { startFakeChat } from '../helpers/fake-chat.js';
import { isHeartbeat, startFakeModel } from '../helpers/fake-model.js';
import { type HookdProcess, makeTempDir, runHookd, startHookd, writeConfig } from '../helpers/hookd-process.js';
import { call } from '../helpers/http.js';

/**
 * The operator's terminal against a running gateway (docs/cli.md): `hookd requests --follow`
 * with its filters, through a restart of the gateway; `hookd runs <id>`; `hookd alerts`. Every
 * command runs as its own process, as a user types it.
 */

const TOKEN = 'operator-cli-hook-token-0123456789';
const GATEWAY = 'operator-cli-gateway-token-0123456789';
const GH_SECRET = 'operator-cli-github-secret';
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const HOOK = { authorization: `Bearer ${TOKEN}` };
const note = { id: 'note', match: { path: 'note' }, action: 'wake', textTemplate: 'note {{n}}' };
const gh = {
  id: 'gh',
  match: { path: 'gh' },
  action: 'wake',
  textTemplate: '{{headers.x-github-event}} {{n}}',
  verify: { scheme: 'github', secret: GH_SECRET },
  eventType: { header: 'x-github-event' },
};

/** A delivery to /hooks/gh signed with the mapping's secret (or `secret`). */
async function github(url: string, event: string, n: number, secret = GH_SECRET) {
  const raw = Buffer.from(JSON.stringify({ n }));
  const signed = signDelivery({ scheme: 'github', secret }, raw);
  return call(`${url}/hooks/gh`, {
    headers: { 'content-type': 'application/json', 'x-github-event': event, ...signed },
    body: raw,
  });
}

/** Lines of a follower's stdout that are rows (the header and blank lines left out). */
const rows = (p: HookdProcess) =>
  p
    .stdout()
    .split('\n')
    .filter((line) => /^\d{4}-/.test(line));

describe('hookd requests --follow', () => {
  it('prints the last requests, then each new one that passes the filters, with its reason, through a gateway restart', async () => {
    const temp = makeTempDir();
    cleanups.push(temp.cleanup);
    const config = {
      gateway: { auth: { token: GATEWAY } },
      hooks: { enabled: true, token: TOKEN, mappings: [note, gh] },
      agents: { defaults: { heartbeat: { every: '0' } } },
    };
    let gateway = await startHookd({ dir: temp.dir, config });
    cleanups.push(() => gateway.stop());
    const file = writeConfig(temp.dir, config);
    await github(gateway.url, 'push', 1);
    await call(`${gateway.url}/hooks/note`, { headers: HOOK, json: { n: 2 } });

    // Every request of the gh mapping; the times in the follower's own zone (UTC+05:30).
    const all = await startHookd({
      dir: temp.dir,
      command: ['requests', '--follow', '--mapping', 'gh', '--config', file, '--url', gateway.url],
      env: { TZ: 'Asia/Kolkata' },
      readyPattern: /hookd: following/,
    });
    cleanups.push(() => all.stop());
    // Only the issues events, as one JSON object a line.
    const issuesOnly = await startHookd({
      dir: temp.dir,
      command: ['requests', '-f', '-e', 'issues', '--json', '--config', file, '--url', gateway.url],
      readyPattern: /hookd: following/,
    });
    cleanups.push(() => issuesOnly.stop());
    expect(all.stdout().split('\n')[0]).toMatch(
      /^RECEIVED\s+ID\s+PATH\s+EVENT\s+STATUS\s+CODE\s+MAPPING\s+MS\s+ACTIONS\s+REASON$/,
    );
    expect(rows(all)).toHaveLength(1);
    expect(rows(all)[0]).toMatch(/ gh\s+push\s+200\s+-\s+gh\s+\d+\s+1 event\s+-$/);
    expect(issuesOnly.stdout()).toBe('');

    const bad = await github(gateway.url, 'push', 3, 'not-the-secret');
    expect(bad.status).toBe(401);
    const issues = await github(gateway.url, 'issues', 4);
    const lastNote = await call(`${gateway.url}/hooks/note`, { headers: HOOK, json: { n: 5 } });
    await expect.poll(() => rows(all).length, { timeout: 10_000 }).toBe(3);
    const [, badRow, issuesRow] = rows(all);
    expect(badRow).toContain(bad.headers['x-request-id'] as string);
    // A refused request says why; its sender is unknown, so it has no event type.
    expect(badRow).toMatch(/ gh\s+-\s+401\s+SIGNATURE_INVALID\s+gh\s+\d+\s+-\s+\S.*signature/);
    expect(issuesRow).toContain(issues.headers['x-request-id'] as string);
    expect(issuesRow).toMatch(/ gh\s+issues\s+200 /);
    const received = (
      await call(`${gateway.url}/api/requests/${issues.headers['x-request-id']}`, {
        method: 'GET',
        headers: { authorization: `Bearer ${GATEWAY}` },
      })
    ).body.receivedAt as string;
    const inKolkata = new Date(Date.parse(received) + 5.5 * 3_600_000).toISOString().slice(0, 19).replace('T', ' ');
    expect(issuesRow?.slice(0, 19)).toBe(inKolkata);
    await expect.poll(() => issuesOnly.stdout(), { timeout: 10_000 }).toContain('\n');
    const [json] = issuesOnly.stdout().trim().split('\n');
    // JSON keeps the API's ISO time.
    expect(JSON.parse(json as string) as RequestView).toMatchObject({
      id: issues.headers['x-request-id'],
      eventType: 'issues',
      receivedAt: received,
    });

    // Listing (no --follow) takes the same filters; --since is how far back.
    const listed = await runHookd([
      'requests',
      '--status',
      '4xx',
      '--since',
      '1h',
      '--config',
      file,
      '--url',
      gateway.url,
    ]);
    expect(listed.stdout.trim().split('\n').slice(1)).toEqual([
      expect.stringContaining(bad.headers['x-request-id'] as string),
    ]);

    // The gateway restarts on its port: the follower waits, reconnects and misses nothing.
    const port = new URL(gateway.url).port;
    await gateway.stop();
    await expect.poll(() => all.stderr(), { timeout: 10_000 }).toMatch(/cannot reach .* trying again in/);
    // One started while the gateway is down waits for it, then shows its last two requests.
    const late = await startHookd({
      dir: temp.dir,
      command: ['requests', '-f', '-n', '2', '--config', file, '--url', gateway.url],
      readyPattern: /hookd: cannot reach/,
    });
    cleanups.push(() => late.stop());
    gateway = await startHookd({ dir: temp.dir, config: { ...config, server: { port: Number(port) } } });
    await expect.poll(() => late.stderr(), { timeout: 30_000 }).toContain('hookd: following');
    expect(rows(late)).toHaveLength(2);
    expect(rows(late)[0]).toContain(issues.headers['x-request-id'] as string);
    expect(rows(late)[1]).toContain(lastNote.headers['x-request-id'] as string);
    const after = await github(gateway.url, 'release', 7);
    await expect.poll(() => rows(late).length, { timeout: 10_000 }).toBe(3);
    await expect.poll(() => rows(all).length, { timeout: 30_000 }).toBe(4);
    expect(all.stderr()).toContain('hookd: following');
    expect(rows(all)[3]).toContain(after.headers['x-request-id'] as string);
    const later = await github(gateway.url, 'release', 8);
    await expect.poll(() => rows(all).length, { timeout: 10_000 }).toBe(5);
    expect(rows(all)[4]).toContain(later.headers['x-request-id'] as string);

    expect(issuesOnly.stdout().trim().split('\n')).toHaveLength(1);
    await all.stop('SIGINT');
    expect(await all.exited).toEqual({ code: 0, signal: null });
  }, 90_000);

  it('exits 1 naming what the gateway refused: a bad filter, a wrong token', async () => {
    const config = {
      gateway: { auth: { token: GATEWAY } },
      hooks: { enabled: true, token: TOKEN, mappings: [note] },
      agents: { defaults: { heartbeat: { every: '0' } } },
    };
    const gateway = await startHookd({ config });
    cleanups.push(() => gateway.stop());
    const file = join(gateway.dir, 'hookd.json5');
    const badSince = await runHookd(['requests', '-f', '--since', 'yesterday', '--config', file, '--url', gateway.url]);
    expect(badSince.code).toBe(1);
    expect(badSince.stderr).toContain('400: since: expected an ISO time or a duration');
    const badStatus = await runHookd(['requests', '--status', '5x', '--config', file, '--url', gateway.url]);
    expect(badStatus.code).toBe(1);
    expect(badStatus.stderr).toMatch(/--status.*a status such as 500, or a class such as 5xx/);
    const wrong = await runHookd(['requests', '-f', '--url', gateway.url], {
      cwd: makeTempDir().dir,
      env: { HOOKD_GATEWAY_TOKEN: 'not-the-gateway-token-0123' },
    });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('401');
  });
});

describe('hookd runs <id> and hookd alerts', () => {
  it('shows a run with its failed tries and delivery, and the alert its mapping raised until it recovered', async () => {
    let failing = 2;
    const model = await startFakeModel((r) =>
      isHeartbeat(r) ? 'HEARTBEAT_OK' : failing-- > 0 ? { status: 500 } : 'all green',
    );
    cleanups.push(() => model.close());
    const chat = await startFakeChat();
    cleanups.push(() => chat.close());
    const config = {
      gateway: { auth: { token: GATEWAY } },
      hooks: {
        enabled: true,
        token: TOKEN,
        mappings: [
          { id: 'ci', match: { path: 'ci' }, messageTemplate: 'build {{n}}', name: 'CI' },
          {
            id: 'strict',
            match: { path: 'strict' },
            action: 'wake',
            textTemplate: '{{text}}',
            schema: { required: ['text'] },
          },
        ],
        alerts: { mappingFailures: { count: 2 } },
      },
      channels: { chatnet: { apiBase: chat.url, botToken: 'bot-operator-cli', defaultTo: '42' } },
      agents: { defaults: { model: 'fake/m', heartbeat: { every: '0' } } },
      models: { providers: { fake: { baseUrl: model.url, api: 'openai-chat' } } },
    };
    const gateway = await startHookd({ config });
    cleanups.push(() => gateway.stop());
    const file = join(gateway.dir, 'hookd.json5');
    const cli = (...args: string[]) => runHookd([...args, '--config', file, '--url', gateway.url]);

    const sent = await call(`${gateway.url}/hooks/ci`, { headers: HOOK, json: { n: 7 } });
    const runId = sent.body.runId as string;
    let shown = await cli('runs', runId);
    for (let i = 0; i < 100 && !shown.stdout.includes('delivery sent'); i++) {
      await new Promise((r) => setTimeout(r, 100));
      shown = await cli('runs', runId);
    }
    expect(shown.code).toBe(0);
    const lines = shown.stdout.trim().split('\n');
    expect(lines.slice(0, 6)).toEqual([
      `run      ${runId}`,
      'status   ok',
      'name     CI',
      'mapping  ci',
      'model    fake/m',
      expect.stringMatching(/^session {2}hook:/),
    ]);
    const timeline = lines.slice(lines.indexOf('timeline') + 1, lines.indexOf('delivery sent (chatnet → 42)'));
    expect(timeline.map((line) => line.replace(/^ {2}\d{4}-\d\d-\d\d \d\d:\d\d:\d\d {2}/, ''))).toEqual([
      'queued',
      'started',
      expect.stringMatching(/^model try 1 failed: MODEL_REFUSED \(HTTP 500\) /),
      expect.stringMatching(/^model try 2 failed: MODEL_REFUSED \(HTTP 500\) /),
      'finished: ok',
    ]);
    expect(lines.slice(-2)).toEqual(['output', '  all green']);
    expect(JSON.parse((await cli('runs', runId, '--json')).stdout)).toMatchObject({ runId, mappingId: 'ci' });
    const unknown = await cli('runs', 'no-such-run');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('404');

    expect((await cli('alerts')).stdout.trim()).toBe('no alert is open\nno alert was sent');
    for (const n of [1, 2]) await call(`${gateway.url}/hooks/strict`, { headers: HOOK, json: { n } });
    await expect.poll(() => chat.sent.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
    const open = await cli('alerts', '--open');
    expect(open.code).toBe(0);
    const [title, header, row] = open.stdout.trim().split('\n');
    expect(title).toBe('open (1)');
    expect(header).toMatch(/^ {2}SINCE\s+CONDITION\s+SOURCE\s+COUNT\s+LAST ERROR\s+LOOK AT$/);
    expect(row).toMatch(
      /^ {2}\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\s+mappingFailures\s+strict\s+2\s+PAYLOAD_INVALID.*\/ui\/#\//,
    );

    await call(`${gateway.url}/hooks/strict`, { headers: HOOK, json: { text: 'fine' } });
    await expect.poll(async () => (await cli('alerts')).stdout, { timeout: 10_000 }).toContain('recovered');
    const after = (await cli('alerts')).stdout.trim().split('\n');
    expect(after[0]).toBe('no alert is open');
    expect(after[1]).toBe('recent');
    expect(after.slice(3).map((line) => line.trim().split(/\s+/)[0])).toEqual(['recovered', 'firing']);
    const json = JSON.parse((await cli('alerts', '--json')).stdout) as { open: unknown[]; recent: unknown[] };
    expect(json.open).toEqual([]);
    expect(json.recent).toHaveLength(2);
  }, 60_000);
});
