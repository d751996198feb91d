import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isHeartbeat, startFakeModel } from '../helpers/fake-model.js';
import { makeTempDir, ROOT, startHookd } from '../helpers/hookd-process.js';
import { call } from '../helpers/http.js';

const TOKEN = 'metrics-hook-token-0123456789';
const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

describe('GET /metrics', () => {
  it('exposes requests by endpoint and status, transform durations, queue depth, runs and deliveries', async () => {
    const temp = makeTempDir();
    cleanups.push(temp.cleanup);
    cpSync(join(ROOT, 'test/fixtures/transforms'), join(temp.dir, 'transforms'), { recursive: true });
    const model = await startFakeModel((r) => (isHeartbeat(r) ? 'HEARTBEAT_OK' : 'ok'));
    cleanups.push(() => model.close());
    const hookd = await startHookd({
      dir: temp.dir,
      config: {
        hooks: {
          enabled: true,
          token: TOKEN,
          mappings: [
            { id: 'alerts', match: { path: 'alerts' }, transform: { module: 'hostile.ts', export: 'toWake' } },
          ],
        },
        agents: { defaults: { model: 'fake/m', heartbeat: { every: '0' } } },
        models: { providers: { fake: { baseUrl: model.url, api: 'openai-chat' } } },
      },
    });
    cleanups.push(() => hookd.stop());
    const hook = { authorization: `Bearer ${TOKEN}` };
    await call(`${hookd.url}/hooks/wake`, { headers: hook, json: { text: 'x', mode: 'next-heartbeat' } });
    await call(`${hookd.url}/hooks/wake`, { json: { text: 'no token' } });
    await call(`${hookd.url}/hooks/agent`, {
      headers: hook,
      json: { message: 'm', deliver: false, wakeMode: 'next-heartbeat' },
    });
    await call(`${hookd.url}/hooks/alerts`, { headers: hook, json: { alert: 'disk' } });
    await call(`${hookd.url}/hooks/somewhere-random-${Date.now()}`, { headers: hook, json: {} });
    await expect.poll(() => model.requests.length).toBeGreaterThan(0);
    const res = await fetch(`${hookd.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await res.text();
    expect(text).toContain('hookd_requests_total{endpoint="wake",status="200"} 1');
    expect(text).toContain('hookd_requests_total{endpoint="hooks",status="401"} 1');
    expect(text).toContain('hookd_requests_total{endpoint="agent",status="202"} 1');
    expect(text).toContain('hookd_requests_total{endpoint="mapped",status="200"} 1');
    expect(text).toContain('hookd_requests_total{endpoint="mapped",status="404"} 1');
    expect(text).not.toContain('somewhere-random');
    expect(text).toMatch(/hookd_transform_duration_seconds_count\{mapping="alerts"\} 1/);
    expect(text).toMatch(/hookd_run_queue_depth \d+/);
    await expect
      .poll(
        async () => (await (await fetch(`${hookd.url}/metrics`)).text()).match(/hookd_runs\{status="ok"\} (\d+)/)?.[1],
      )
      .toBe('1');
    // The run (deliver: false) is skipped; the mapped wake's heartbeat, an acknowledgement, may be too by now.
    const skipped = (await (await fetch(`${hookd.url}/metrics`)).text()).match(
      /hookd_deliveries_total\{status="skipped"\} (\d+)/,
    )?.[1];
    expect(Number(skipped)).toBeGreaterThanOrEqual(1);
  });
});
