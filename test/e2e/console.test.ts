/// <reference lib="dom" />
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { artefact, browserTestsRun, liveOpen, signedIn as signInto } from '../helpers/browser.js';
import type { FakeChat } from '../helpers/fake-chat.js';
import { type Gateway, startGateway } from '../helpers/gateway.js';
import type { HookdProcess } from '../helpers/hookd-process.js';
import { call, until } from '../helpers/http.js';

/**
 * The operator console in a real browser (docs/console.md): Debian's Chromium driven by
 * playwright-core against a spawned gateway. One file over 300 lines on purpose: every test
 * shares the one gateway and browser, whose start is most of the file's time.
 */

const HOOK_TOKEN = 'console-hook-token-0123456789';
const GATEWAY_TOKEN = 'console-gateway-token-0123456789';
const HOOK = { authorization: `Bearer ${HOOK_TOKEN}` };
const ADMIN = { authorization: `Bearer ${GATEWAY_TOKEN}` };

const THROWS = `export default function () { throw new Error('not fixed yet'); }\n`;
const FIXED = `export default function ({ payload }: { payload: { n: number } }) {
  return { kind: 'agent', message: 'fixed ' + payload.n };
}\n`;

let browser: Browser;
let hookd: HookdProcess;
let chat: FakeChat;
let dir: string;
let gateway: Gateway | undefined;

beforeAll(async () => {
  if (!browserTestsRun) return;
  gateway = await startGateway({
    hookToken: HOOK_TOKEN,
    gatewayToken: GATEWAY_TOKEN,
    files: { 'transforms/flaky.ts': THROWS, 'transforms/broken.ts': THROWS },
    chatBotToken: 'bot-secret-123',
    hooks: {
      transformsDir: 'transforms',
      mappings: [
        { id: 'flaky', match: { path: 'flaky' }, transform: { module: 'flaky.ts' }, deliver: false },
        { id: 'broken', match: { path: 'broken' }, transform: { module: 'broken.ts' }, deliver: false },
        { id: 'note', match: { path: 'note' }, action: 'wake', textTemplate: 'note {{n}} from {{who}}' },
      ],
    },
    browser: true,
  });
  ({ hookd, chat, browser, dir } = gateway);
}, 60_000);

afterAll(() => gateway?.stop());

/** A fresh browser profile, signed in through the form. */
const signedIn = (viewport = { width: 1280, height: 900 }) => signInto(browser, hookd.url, GATEWAY_TOKEN, { viewport });

describe.skipIf(!browserTestsRun)('the operator console in Chromium (docs/console.md)', () => {
  it('signs in with the gateway token into an HttpOnly, SameSite=Strict session; a wrong token is refused', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${hookd.url}/ui`);
    expect(page.url()).toBe(`${hookd.url}/ui/`);
    await page.getByLabel('Gateway token').fill('not-the-token');
    await page.keyboard.press('Enter');
    await expect(page.getByRole('alert').textContent()).resolves.toContain('not the gateway token');
    expect(await context.cookies()).toEqual([]);

    await page.getByLabel('Gateway token').fill(GATEWAY_TOKEN);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Live log' }).waitFor();
    const [cookie, ...more] = await context.cookies();
    expect(more).toEqual([]);
    expect(cookie).toMatchObject({ name: 'hookd_session', httpOnly: true, sameSite: 'Strict', path: '/' });
    expect(cookie?.value).not.toContain(GATEWAY_TOKEN);
    // The token is in no URL the browser visited, and scripts cannot read the cookie.
    expect(page.url()).toBe(`${hookd.url}/ui/`);
    expect(await page.evaluate(() => document.cookie)).toBe('');
    await context.close();
  });

  it('shows a curl in the live log within 2 s', async () => {
    const { context, page } = await signedIn();
    await liveOpen(page);
    const sent = Date.now();
    await promisify(execFile)('curl', [
      '-sS',
      '-o',
      '/dev/null',
      '-H',
      `Authorization: Bearer ${HOOK_TOKEN}`,
      '-H',
      'Content-Type: application/json',
      '-H',
      'X-Request-Id: curl-live-1',
      '-d',
      '{"n": 1, "who": "curl"}',
      `${hookd.url}/hooks/note`,
    ]);
    const row = page.locator('tr[data-request-id="curl-live-1"]');
    // Live: without the stream, the page shows a request only once reloaded (never, here); 5 s
    // leave a loaded machine room for curl, the gateway and Chromium.
    await row.waitFor({ timeout: 5000 });
    const shownAfterMs = Date.now() - sent;
    expect(shownAfterMs).toBeLessThan(5000);
    await expect(row.textContent()).resolves.toMatch(/note · note.*200.*1 event/);
    await page.screenshot({ path: artefact('console', 'live-log') });
    await context.close();
  });

  it('replays a request whose transform threw, fixed on disk, from its page; the replay produces a run', async () => {
    const { context, page } = await signedIn();
    await liveOpen(page);
    const failed = await call(`${hookd.url}/hooks/flaky`, { headers: HOOK, json: { n: 7 } });
    expect(failed.status).toBe(500);
    const id = failed.headers['x-request-id'] as string;
    await page.locator(`tr[data-request-id="${id}"] a`).click();
    await page.getByRole('heading', { name: `Request ${id}` }).waitFor();
    await expect(page.locator('.problem').first().textContent()).resolves.toContain('TRANSFORM_FAILED');
    // The hook token: its header by name, masked, marked as the credential that held.
    const token = await page.locator('tr[data-header="authorization"]').textContent();
    expect(token).toContain('[masked] verified');
    expect(await page.content()).not.toContain(HOOK_TOKEN);

    writeFileSync(join(dir, 'transforms/flaky.ts'), FIXED);
    // The gateway reloads the transform on its own; the playground shows when it has.
    await until(async () => {
      const tried = await call(`${hookd.url}/api/try`, { headers: ADMIN, json: { path: 'flaky', body: '{"n":0}' } });
      return tried.status === 200 ? true : undefined;
    }, 'the fixed transform to be loaded');

    await page.getByRole('button', { name: 'Replay', exact: true }).click();
    const notice = page.locator('.notice');
    await notice.waitFor();
    await expect(notice.textContent()).resolves.toContain('Replayed: 202');
    await page.getByRole('link', { name: 'See the replay' }).click();
    await page.getByText('Replay of').waitFor();
    await page.locator('table a[href^="#/runs/"]').first().click();
    // The run page follows the run live until the model has answered.
    await page.getByTestId('run-status').filter({ hasText: 'ok' }).waitFor({ timeout: 10_000 });
    await page.getByText('the reply').first().waitFor();
    await expect(page.locator('article.message').first().textContent()).resolves.toContain('fixed 7');
    await expect(page.locator('dl.facts').textContent()).resolves.not.toContain('not yet');
    await page.screenshot({ path: artefact('console', 'replayed-run') });

    // The original now counts as replayed, through the API the page used.
    const original = (await call(`${hookd.url}/api/requests/${id}`, { method: 'GET', headers: ADMIN })).body;
    expect(original.replayedAt).toEqual(expect.any(String));
    await page.goto(`${hookd.url}/ui/#/requests/${id}`);
    await page.getByText('Replayed', { exact: true }).waitFor();
    await page.screenshot({ path: artefact('console', 'request'), fullPage: true });
    // The log now holds the failure, its replay and the earlier curl.
    await page.getByRole('link', { name: 'Live log' }).click();
    await page.locator(`tr[data-request-id="${id}"]`).waitFor();
    // The health strip catches up within its 2 s refresh.
    await page.locator('.health', { hasText: 'runs: 1 ok' }).waitFor({ timeout: 5000 });
    await page.screenshot({ path: artefact('console', 'live-log-replayed') });

    // Replayed again, nothing runs: the first replay's answer comes back. Replay anew runs it again, and says so.
    await page.goto(`${hookd.url}/ui/#/requests/${id}`);
    await page.getByRole('button', { name: 'Replay', exact: true }).click();
    await page.locator('.notice', { hasText: 'Already run: 202' }).waitFor();
    await page.getByRole('button', { name: 'Replay anew' }).click();
    await page.locator('.notice', { hasText: 'Replayed: 202' }).waitFor();
    await page.getByRole('link', { name: 'See the replay' }).click();
    await page.getByText('(run anew on purpose)').waitFor();
    await context.close();
  });

  it('shows a refused request: where from, why, its token masked and not verified, no body', async () => {
    const { context, page } = await signedIn();
    await liveOpen(page);
    const body = JSON.stringify({ n: 'a body nobody authenticated' });
    const wrong = { authorization: 'Bearer wrong-console-token-0123', 'content-type': 'application/json' };
    const refused = await call(`${hookd.url}/hooks/note`, { headers: wrong, body });
    expect(refused.status).toBe(401);
    const id = refused.headers['x-request-id'] as string;
    await page.locator(`tr[data-request-id="${id}"] a`).click();
    await page.getByRole('heading', { name: `Request ${id}` }).waitFor();
    await expect(page.locator('dl.facts').textContent()).resolves.toContain('missing or invalid hook token');
    await expect(page.getByTestId('authenticated').textContent()).resolves.toContain('not authenticated');
    await expect(page.locator('tr[data-header="authorization"]').textContent()).resolves.toContain(
      '[masked] not verified',
    );
    await expect(page.locator('main').textContent()).resolves.toContain('not kept');
    const html = await page.content();
    expect(html).not.toContain('wrong-console-token');
    expect(html).not.toContain('nobody authenticated');
    await context.close();
  });

  it('renders an action for a pasted payload in the playground, dispatching nothing', async () => {
    const { context, page } = await signedIn();
    await page.getByRole('link', { name: 'Mappings & playground' }).click();
    await page.getByRole('cell', { name: 'flaky.ts', exact: true }).waitFor();
    const before = (await call(`${hookd.url}/api/requests?limit=200`, { method: 'GET', headers: ADMIN })).body;
    await page.getByLabel('Hook').selectOption('note');
    await page.getByLabel('Payload').fill('{"n": 42, "who": "the playground"}');
    await page.getByRole('button', { name: 'Render' }).click();
    const result = page.getByTestId('playground-result');
    await result.waitFor();
    const rendered = JSON.parse((await result.textContent()) ?? '');
    expect(rendered).toMatchObject({
      mapping: 'note',
      actions: [{ kind: 'wake', text: 'note 42 from the playground' }],
    });
    // A payload missing a name the template reads: said, not silently rendered empty.
    await page.getByLabel('Payload').fill('{"n": 43}');
    await page.getByRole('button', { name: 'Render' }).click();
    await page.getByTestId('playground-result').filter({ hasText: '{{who}}' }).waitFor();
    await page.screenshot({ path: artefact('console', 'playground'), fullPage: true });
    // Nothing was logged, queued or dispatched.
    const after = (await call(`${hookd.url}/api/requests?limit=200`, { method: 'GET', headers: ADMIN })).body;
    expect((after.requests as unknown[]).length).toBe((before.requests as unknown[]).length);
    const events = (await call(`${hookd.url}/api/sessions`, { method: 'GET', headers: ADMIN })).text;
    expect(events).not.toContain('the playground');
    await context.close();
  });

  it('redelivers a failed chat delivery from the run page, once', async () => {
    const { context, page } = await signedIn();
    chat.refuseNext(1);
    const agent = await call(`${hookd.url}/hooks/agent`, {
      headers: HOOK,
      json: { message: 'tell me', deliver: true, channel: 'chatnet', to: '42' },
    });
    expect(agent.status).toBe(202);
    const runId = agent.body.runId as string;
    await page.goto(`${hookd.url}/ui/#/runs/${runId}`);
    // The page follows the run until its delivery has failed, then offers Redeliver.
    const redeliver = page.getByRole('button', { name: 'Redeliver' });
    await redeliver.waitFor({ timeout: 10_000 });
    await expect(page.getByText(/^failed to chatnet 42/).textContent()).resolves.toContain('failed');
    const sentBefore = chat.sent.length;
    await redeliver.click();
    await page.locator('.notice', { hasText: 'Redelivered: sent' }).waitFor();
    await page.getByText(/^sent to chatnet 42/).waitFor();
    expect(await redeliver.count()).toBe(0);
    expect(chat.sent.slice(sentBefore).map((m) => m.text)).toEqual(['the reply']);
    await context.close();
  });

  it("shows a run's failed delivery attempt in its timeline as it happens, then the delivery", async () => {
    const { context, page } = await signedIn();
    chat.failNext(1);
    const agent = await call(`${hookd.url}/hooks/agent`, {
      headers: HOOK,
      json: { message: 'try twice', deliver: true, channel: 'chatnet', to: '42' },
    });
    const runId = agent.body.runId as string;
    await page.goto(`${hookd.url}/ui/#/runs/${runId}`);
    const timeline = page.getByTestId('run-attempts');
    await timeline.getByRole('row', { name: /delivery attempt 1 CHANNEL_REFUSED \(HTTP 502\) Bad Gateway/ }).waitFor();
    await page.getByText(/^sent to chatnet 42/).waitFor();
    expect(await timeline.getByRole('row').count()).toBe(2);
    await page.screenshot({ path: artefact('console', 'run-attempts'), fullPage: true });
    await context.close();
  });

  it('shows an open alert in the health strip, linking to the request that failed last (docs/console.md)', async () => {
    const { context, page } = await signedIn();
    await liveOpen(page);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const failed = await call(`${hookd.url}/hooks/broken`, { headers: HOOK, json: { n: i } });
      expect(failed.status).toBe(500);
      ids.push(failed.headers['x-request-id'] as string);
    }
    const alert = await until(
      async () => chat.sent.find((m) => m.text.startsWith('hookd alert: mapping broken')),
      'the alert in the chat',
    );
    expect(alert.text).toContain(`console: ${hookd.url}/ui/#/requests/${ids[4]}`);
    // The next request the live stream brings refreshes the strip.
    await call(`${hookd.url}/hooks/note`, { headers: HOOK, json: { n: 9, who: 'the strip' } });
    const open = page.getByRole('list', { name: 'Open alerts' });
    const link = open.getByRole('link', { name: 'mapping broken failed 5 times in 10 min' });
    await link.waitFor({ timeout: 5000 });
    await expect(open.textContent()).resolves.toMatch(/since .* · TRANSFORM_FAILED \(HTTP 500\) at broken\.ts:1:\d+/);
    await page.screenshot({ path: artefact('console', 'open-alert') });
    await link.click();
    await page.getByRole('heading', { name: `Request ${ids[4]}` }).waitFor();
    await context.close();
  });

  it('refuses a state change without the CSRF token, or from another site, with 403', async () => {
    const { context, page } = await signedIn();
    const id = 'curl-live-1';
    const statuses = await page.evaluate(async (requestId) => {
      const csrf = document.querySelector<HTMLMetaElement>('meta[name="csrf-token"]')?.content ?? '';
      const replay = (headers: Record<string, string>) =>
        fetch(`/api/requests/${requestId}/replay`, { method: 'POST', headers }).then(async (r) => ({
          status: r.status,
          code: ((await r.json()) as { code?: string }).code,
        }));
      return {
        none: await replay({}),
        wrong: await replay({ 'x-csrf-token': 'x'.repeat(43) }),
        right: await replay({ 'x-csrf-token': csrf }),
        signOutWithout: (await fetch('/ui/logout', { method: 'POST', redirect: 'manual' })).status,
      };
    }, id);
    expect(statuses.none).toEqual({ status: 403, code: 'CSRF_REFUSED' });
    expect(statuses.wrong).toEqual({ status: 403, code: 'CSRF_REFUSED' });
    expect(statuses.right.status).toBe(200);
    expect(statuses.signOutWithout).toBe(403);

    // Another site's form or script carrying the cookie (were SameSite not enough) is refused too.
    const [cookie] = await context.cookies();
    const csrf = await page.locator('meta[name="csrf-token"]').getAttribute('content');
    const crossSite = await call(`${hookd.url}/api/requests/${id}/replay`, {
      headers: {
        cookie: `hookd_session=${cookie?.value}`,
        'x-csrf-token': csrf ?? '',
        origin: 'http://evil.example',
      },
    });
    expect(crossSite.status).toBe(403);
    expect(crossSite.body.code).toBe('CSRF_REFUSED');
    // The session is still live after the refusals.
    await page.reload();
    await page.getByRole('heading', { name: 'Live log' }).waitFor();
    await context.close();
  });

  it('signs out: the session is revoked, and its stale cookie gets the sign-in page and no API', async () => {
    const { context, page } = await signedIn();
    const [cookie] = await context.cookies();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Gateway token').waitFor();
    expect(await context.cookies()).toEqual([]);

    const stale = await browser.newContext();
    if (cookie) await stale.addCookies([cookie]);
    const again = await stale.newPage();
    await again.goto(`${hookd.url}/ui/`);
    await again.getByLabel('Gateway token').waitFor();
    expect(await again.locator('#app').count()).toBe(0);
    const api = await call(`${hookd.url}/api/requests`, {
      method: 'GET',
      headers: { cookie: `hookd_session=${cookie?.value}` },
    });
    expect(api.status).toBe(401);
    await stale.close();
    await context.close();
  });

  it('is readable at 390 px wide and usable from the keyboard', async () => {
    const { context, page } = await signedIn({ width: 390, height: 844 });
    // Nothing wider than the screen but the tables, which scroll inside their own box.
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth);
    expect(overflow).toBeLessThanOrEqual(390);
    await page.screenshot({ path: artefact('console', 'live-log-390'), fullPage: true });

    // Tab reaches the skip link first, then the navigation; Enter follows a link.
    await page.keyboard.press('Tab');
    await expect(page.evaluate(() => document.activeElement?.textContent)).resolves.toBe('Skip to content');
    for (let i = 0; i < 2; i++) await page.keyboard.press('Tab');
    await expect(page.evaluate(() => document.activeElement?.textContent)).resolves.toBe('Failed');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Failed requests' }).waitFor();
    // The new page's heading takes the focus, for screen readers.
    await until(
      async () => ((await page.evaluate(() => document.activeElement?.tagName)) === 'H1' ? true : undefined),
      'focus on the heading',
    );
    await context.close();
  });
});
