/// <reference lib="dom" />
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunView } from '../../src/views.js';
import { artefact, browserTestsRun, signedIn } from '../helpers/browser.js';
import type { FakeModel } from '../helpers/fake-model.js';
import { type Gateway, startGateway } from '../helpers/gateway.js';
import type { HookdProcess } from '../helpers/hookd-process.js';
import { call, until } from '../helpers/http.js';

/**
 * The console's side of fault isolation (docs/console.md): a run page says why its run waits and
 * cancels it, and the health strip shows a breaker that holds a dead model's runs back.
 */

const HOOK_TOKEN = 'console-cancel-hook-token-0123456789';
const GATEWAY_TOKEN = 'console-cancel-gateway-token-0123456789';

let browser: Browser;
let hookd: HookdProcess;
let model: FakeModel;
let gateway: Gateway | undefined;

beforeAll(async () => {
  if (!browserTestsRun) return;
  const agent = { action: 'agent', deliver: false, wakeMode: 'next-heartbeat' };
  gateway = await startGateway({
    hookToken: HOOK_TOKEN,
    gatewayToken: GATEWAY_TOKEN,
    reply: () => ({ stall: true }),
    hooks: {
      mappings: [
        {
          id: 'slow',
          match: { path: 'slow' },
          ...agent,
          name: 'slow {{n}}',
          messageTemplate: 'slow {{n}}',
          maxConcurrent: 1,
        },
        { id: 'broken', match: { path: 'broken' }, ...agent, messageTemplate: 'broken {{n}}', model: 'dead/x' },
      ],
    },
    // Nothing listens on loopback's discard port: connections are refused.
    providers: { dead: { baseUrl: 'http://127.0.0.1:9/v1', api: 'openai-chat' } },
    browser: true,
  });
  ({ hookd, model, browser } = gateway);
}, 60_000);

afterAll(() => gateway?.stop());

const send = async (path: string, json: unknown): Promise<string> => {
  const answer = await call(`${hookd.url}/hooks/${path}`, {
    headers: { authorization: `Bearer ${HOOK_TOKEN}` },
    json,
  });
  expect(answer.status).toBe(202);
  return answer.body.runId as string;
};

const runOf = async (runId: string) =>
  (
    await call(`${hookd.url}/api/runs/${runId}`, {
      method: 'GET',
      headers: { authorization: `Bearer ${GATEWAY_TOKEN}` },
    })
  ).body as unknown as RunView;

describe.skipIf(!browserTestsRun)('the console and fault isolation (docs/console.md)', () => {
  it('says why a run waits, and cancels it and a running run with their Cancel buttons', async () => {
    const running = await send('slow', { n: 1 });
    await until(async () => (model.requests.length === 1 ? true : undefined), 'the first run to call its model');
    const waiting = await send('slow', { n: 2 });
    const { context, page } = await signedIn(browser, hookd.url, GATEWAY_TOKEN);
    await page.goto(`${hookd.url}/ui/#/runs/${waiting}`);
    await page
      .getByTestId('run-waiting')
      .filter({ hasText: 'waiting for a slot of mapping slow (1 of 1 in use)' })
      .waitFor();
    await page.screenshot({ path: artefact('console', 'run-waiting'), fullPage: true });
    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.locator('.notice', { hasText: 'Cancelled: nothing will be delivered.' }).waitFor();
    await page.getByTestId('run-status').filter({ hasText: 'cancelled' }).waitFor();
    await page.getByRole('button', { name: 'Cancel' }).waitFor({ state: 'detached' });
    expect(model.requests).toHaveLength(1);

    await page.goto(`${hookd.url}/ui/#/runs/${running}`);
    await page.getByTestId('run-status').filter({ hasText: 'running' }).waitFor();
    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.getByTestId('run-status').filter({ hasText: 'cancelled' }).waitFor();
    expect((await runOf(running)).error).toBe('cancelled by the operator');
    await until(async () => (model.abandoned === 1 ? true : undefined), 'its model call to be aborted');
    await context.close();
  });

  it("shows a dead model's open breaker in the health strip, and its runs waiting for it", async () => {
    const runs: string[] = [];
    for (let n = 0; n < 5; n++) runs.push(await send('broken', { n }));
    const { context, page } = await signedIn(browser, hookd.url, GATEWAY_TOKEN);
    const breaker = page.locator('.health .breakers li[data-breaker="dead/x"]');
    await breaker.filter({ hasText: /breaker open: dead\/x until .* \d+ failed tries in a row/ }).waitFor();
    expect(await breaker.textContent()).toContain('MODEL_UNREACHABLE');
    await page.goto(`${hookd.url}/ui/#/runs/${runs[4]}`);
    await page
      .getByTestId('run-waiting')
      .filter({ hasText: /^breaker open for dead\/x until / })
      .waitFor();
    await page.screenshot({ path: artefact('console', 'breaker-open'), fullPage: true });
    await context.close();
  });
});
