/// <reference lib="dom" />
import { execFile } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { artefact, browserTestsRun, liveOpen, signedIn, toDocs } from '../helpers/browser.js';
import { type Gateway, startGateway } from '../helpers/gateway.js';
import { type HookdProcess, ROOT } from '../helpers/hookd-process.js';
import { call } from '../helpers/http.js';

/**
 * The console as the operator's dashboard (docs/console.md): the live log's columns, search,
 * pages and date range; the signature mark and Copy as curl on a request's page; a preset's
 * fixtures in the playground; words kept whole in the mappings table; no frame around a heading.
 * Over 300 lines on purpose, as console.test.ts: its tests share one gateway and one browser.
 */

const HOOK_TOKEN = 'console-log-hook-token-0123456789';
const GATEWAY_TOKEN = 'console-log-gateway-token-0123456789';
const GITHUB_SECRET = 'console-log-github-secret';
const HOOK = { authorization: `Bearer ${HOOK_TOKEN}` };
const ADMIN = { authorization: `Bearer ${GATEWAY_TOKEN}` };
const PUSH = JSON.parse(readFileSync(join(ROOT, 'presets/github/fixtures/push.json'), 'utf8')) as {
  headers: Record<string, string>;
  body: unknown;
};

let browser: Browser;
let hookd: HookdProcess;
let gateway: Gateway | undefined;

beforeAll(async () => {
  if (!browserTestsRun) return;
  gateway = await startGateway({
    hookToken: HOOK_TOKEN,
    gatewayToken: GATEWAY_TOKEN,
    reply: () => 'noted',
    chatBotToken: 'bot-secret-log',
    hooks: {
      presets: [{ name: 'github', secret: GITHUB_SECRET, deliver: false }],
      mappings: [
        { id: 'note', match: { path: 'note' }, action: 'wake', textTemplate: 'note {{n}} from {{who}}' },
        { id: 'bulk', match: { path: 'bulk' }, action: 'wake', textTemplate: 'bulk {{n}}' },
        { id: 'fanout', match: { path: 'fanout' }, forEach: 'items', messageTemplate: 'item {{n}}', deliver: false },
        {
          id: 'billing',
          match: { path: 'billing' },
          messageTemplate: 'invoice {{invoice}}',
          deliver: true,
          channel: 'chatnet',
          to: '42',
        },
      ],
    },
    browser: true,
  });
  ({ hookd, browser } = gateway);
}, 60_000);

afterAll(() => gateway?.stop());

/** GitHub's push fixture, signed with `secret` as GitHub signs it. */
async function sendPush(secret = GITHUB_SECRET): Promise<string> {
  const body = JSON.stringify(PUSH.body);
  const signature = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
  const sent = await call(`${hookd.url}/hooks/github`, {
    headers: { ...PUSH.headers, 'X-GitHub-Delivery': crypto.randomUUID(), 'X-Hub-Signature-256': signature },
    body,
  });
  expect(sent.status).toBe(secret === GITHUB_SECRET ? 202 : 401);
  return sent.headers['x-request-id'] as string;
}

async function sendBilling(invoice: string): Promise<string> {
  const sent = await call(`${hookd.url}/hooks/billing`, { headers: HOOK, json: { invoice } });
  expect(sent.status).toBe(202);
  return sent.headers['x-request-id'] as string;
}

const row = (page: Page, id: string) => page.locator(`tr[data-request-id="${id}"]`);
const cells = (page: Page, id: string) => row(page, id).locator('td').allTextContents();
const shownIds = (page: Page) =>
  page.locator('table.requests tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-request-id')));

/** Types a search into the live log's form and waits for the answer. */
async function search(page: Page, fields: Record<string, string>): Promise<void> {
  for (const [label, value] of Object.entries(fields)) await page.getByLabel(label, { exact: true }).fill(value);
  const answered = page.waitForResponse((r) => r.url().includes('/api/requests?'));
  await page.getByRole('button', { name: 'Search', exact: true }).click();
  await answered;
}

describe.skipIf(!browserTestsRun)('the live log and the request page in Chromium (docs/console.md)', () => {
  it('shows the date and time, source, event type, status, run outcome and duration of each request', async () => {
    const { context, page } = await signedIn(browser, hookd.url, GATEWAY_TOKEN);
    await liveOpen(page);
    const push = await sendPush();
    const billing = await sendBilling('INV-1');
    // The run's outcome follows it live: queued, running, then ok with its delivery.
    await row(page, billing).locator('[data-col="outcome"]', { hasText: '1 run: ok · delivery sent' }).waitFor();
    const [received, source, event, status, outcome, took] = await cells(page, billing);
    expect(received).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    expect([source, event, status, outcome]).toEqual(['billing · billing', '—', '202 ', '1 run: ok · delivery sent']);
    expect(took).toMatch(/^\d+ ms$/);
    await expect(row(page, push).locator('[data-col="event"]').textContent()).resolves.toBe('push');
    // Read back from the API after a reload, the same.
    await page.reload();
    await row(page, billing).waitFor();
    await expect(row(page, billing).locator('[data-col="outcome"]').textContent()).resolves.toBe(
      '1 run: ok · delivery sent',
    );
    await expect(cells(page, push)).resolves.toEqual([
      expect.any(String),
      'github · preset:github',
      'push',
      '202 ',
      expect.stringMatching(/^1 run: (queued|running|ok)/),
      expect.stringMatching(/ ms$/),
    ]);
    await page.screenshot({ path: artefact('console', 'live-log-columns') });
    toDocs(artefact('console', 'live-log-columns'), 'console-live-log');
    await context.close();
  });

  it("reads a fan-out's outcome a few times while its runs move, not once for each move", async () => {
    // Before: each of the runs' moves (queued, running, ok) read the whole request again.
    const { context, page } = await signedIn(browser, hookd.url, GATEWAY_TOKEN);
    await liveOpen(page);
    const reads: string[] = [];
    page.on('request', (r) => {
      if (/\/api\/requests\/[^/?]+$/.test(new URL(r.url()).pathname)) reads.push(r.url());
    });
    const items = Array.from({ length: 30 }, (_, n) => ({ n }));
    const sent = await call(`${hookd.url}/hooks/fanout`, { headers: HOOK, json: { items } });
    expect(sent.status).toBe(202);
    const id = sent.headers['x-request-id'] as string;
    // Thirty runs on a machine busy with other tests: a bound sized by their number.
    await row(page, id).locator('[data-col="outcome"]', { hasText: '30 runs: ok' }).waitFor({ timeout: 45_000 });
    expect(reads.length).toBeGreaterThan(0);
    expect(reads.length).toBeLessThan(30);
    await context.close();
  }, 90_000);

  it('starts the Runs page again from its first page once live runs grow it past 500 rows', async () => {
    // Before: a Runs page left open kept every run the stream told of, without end.
    const { context, page } = await signedIn(browser, hookd.url, GATEWAY_TOKEN);
    const firstPages: string[] = [];
    page.on('request', (r) => {
      const url = new URL(r.url());
      if (url.pathname.endsWith('/api/runs') && !url.searchParams.has('cursor')) firstPages.push(r.url());
    });
    await page.goto(`${hookd.url}/ui/#/runs`);
    await page.locator('tr[data-run-id]').first().waitFor();
    expect(firstPages).toHaveLength(1);
    const items = Array.from({ length: 100 }, (_, n) => ({ n }));
    for (let i = 0; i < 6; i++)
      expect((await call(`${hookd.url}/hooks/fanout`, { headers: HOOK, json: { items } })).status).toBe(202);
    // Six hundred runs told of live: past 500 rows the first page is read again.
    await expect.poll(() => firstPages.length, { timeout: 30_000 }).toBeGreaterThanOrEqual(2);
    await context.close();
  }, 60_000);

  it('searches by request id, event type and payload text, and pauses live additions meanwhile', async () => {
    const { context, page } = await signedIn(browser, hookd.url, GATEWAY_TOKEN);
    const billing = await sendBilling('INV-ZEBRA-7731');
    const push = await sendPush();
    await search(page, { Search: billing });
    await expect.poll(() => shownIds(page)).toEqual([billing]);
    await expect(page.locator('.live').textContent()).resolves.toContain('paused: searching');
    await search(page, { Search: 'zebra-7731' });
    await expect.poll(() => shownIds(page)).toEqual([billing]);
    await search(page, { Search: 'push' });
    await expect.poll(() => shownIds(page)).toContain(push);
    expect(await shownIds(page)).not.toContain(billing);
    // The event type filter is exact.
    await search(page, { Search: '', 'Event type': 'push' });
    await expect.poll(() => shownIds(page)).toContain(push);
    await search(page, { 'Event type': 'pus' });
    await page.getByText('No requests.').waitFor();
    await context.close();
  });

  it('pages past the first 100 rows with Older, moving the focus to the first older row', async () => {
    for (let i = 0; i < 130; i += 10)
      await Promise.all(
        Array.from({ length: 10 }, (_, j) => call(`${hookd.url}/hooks/bulk`, { headers: HOOK, json: { n: i + j } })),
      );
    const { context, page } = await signedIn(browser, hookd.url, GATEWAY_TOKEN);
    await search(page, { Hook: 'bulk' });
    const sources = () => page.locator('table.requests tbody tr td:nth-child(2)').allTextContents();
    await expect.poll(async () => (await sources()).every((s) => s === 'bulk · bulk')).toBe(true);
    await page.getByText('100 requests shown.').waitFor();
    await page.getByRole('button', { name: 'Older' }).click();
    await page.getByText('130 requests shown: that is all the log holds for this view.').waitFor();
    const ids = await shownIds(page);
    expect(new Set(ids).size).toBe(130);
    expect(await page.getByRole('button', { name: 'Older' }).count()).toBe(0);
    // The focus moves once the older rows are drawn: looked for until then.
    const focused = () => page.evaluate(() => document.activeElement?.closest('tr')?.getAttribute('data-request-id'));
    await expect.poll(focused).toBe(ids[100]);
    // Newest first across the pages, as the API lists them.
    const listed = await call(`${hookd.url}/api/requests?path=bulk&limit=200`, { method: 'GET', headers: ADMIN });
    expect(ids).toEqual((listed.body.requests as { id: string }[]).map((r) => r.id));
    await context.close();
  });

  it('narrows the log to a date range, both ends included to the second', async () => {
    const billing = await sendBilling('INV-RANGE');
    const record = (await call(`${hookd.url}/api/requests/${billing}`, { method: 'GET', headers: ADMIN })).body;
    const at = Math.floor(Date.parse(record.receivedAt as string) / 1000) * 1000;
    // The browser in UTC: a datetime-local field's value is then the ISO time without its zone.
    const local = (ms: number) => new Date(ms).toISOString().slice(0, 19);
    const { context, page } = await signedIn(browser, hookd.url, GATEWAY_TOKEN, { timezoneId: 'UTC' });
    const times = async () =>
      (await page.locator('table.requests tbody tr td:nth-child(1)').allTextContents()).map((t) =>
        Date.parse(`${t.replace(' ', 'T')}Z`),
      );
    await search(page, { From: local(at), To: local(at) });
    await expect.poll(async () => (await times()).every((t) => t === at)).toBe(true);
    expect(await shownIds(page)).toContain(billing);
    // Before it: older requests (the earlier tests'), and not this one.
    await search(page, { From: '', To: local(at - 1000) });
    await expect.poll(async () => (await times()).every((t) => t < at)).toBe(true);
    expect(await shownIds(page)).not.toContain(billing);
    await search(page, { From: local(at + 1000), To: '' });
    await expect.poll(async () => (await times()).every((t) => t >= at + 1000)).toBe(true);
    expect(await shownIds(page)).not.toContain(billing);
    await context.close();
  });

  it('ends a range whose To is on the minute with that second, not the whole minute', async () => {
    // A request past the first second of its minute: the browser writes 14:05:00 as `14:05`.
    let billing = await sendBilling('INV-MINUTE');
    let at = Date.parse(
      (await call(`${hookd.url}/api/requests/${billing}`, { method: 'GET', headers: ADMIN })).body.receivedAt as string,
    );
    while (at % 60_000 < 1000) {
      await new Promise((done) => setTimeout(done, 1000 - (at % 60_000)));
      billing = await sendBilling('INV-MINUTE');
      at = Date.parse(
        (await call(`${hookd.url}/api/requests/${billing}`, { method: 'GET', headers: ADMIN })).body
          .receivedAt as string,
      );
    }
    const minute = new Date(at - (at % 60_000)).toISOString().slice(0, 19);
    const { context, page } = await signedIn(browser, hookd.url, GATEWAY_TOKEN, { timezoneId: 'UTC' });
    const start = at - (at % 60_000);
    const shownTimes = async () =>
      (await page.locator('table.requests tbody tr td:nth-child(1)').allTextContents()).map((t) =>
        Date.parse(`${t.replace(' ', 'T')}Z`),
      );
    await search(page, { From: minute, To: minute });
    expect(await page.getByLabel('To', { exact: true }).inputValue()).toBe(minute.slice(0, 16));
    // Until the list is the search's: only its second, and so not the request after it.
    await expect
      .poll(async () => !(await shownIds(page)).includes(billing) && (await shownTimes()).every((t) => t === start))
      .toBe(true);
    await search(page, { From: minute, To: '' });
    await expect.poll(async () => (await shownIds(page)).includes(billing)).toBe(true);
    await context.close();
  });

  it('marks a verified signature on a request whose mapping checks them, and a wrong one as not verified', async () => {
    const { context, page } = await signedIn(browser, hookd.url, GATEWAY_TOKEN);
    const good = await sendPush();
    await page.goto(`${hookd.url}/ui/#/requests/${good}`);
    await expect(page.getByTestId('signature').textContent()).resolves.toBe(
      '✓ signature verified (github, x-hub-signature-256)',
    );
    const bad = await sendPush('not-the-secret');
    await page.goto(`${hookd.url}/ui/#/requests/${bad}`);
    await expect(page.getByTestId('signature').textContent()).resolves.toBe(
      '✗ signature not verified (github, x-hub-signature-256)',
    );
    await expect(page.getByTestId('not-replayable').textContent()).resolves.toContain('refused at the door');
    // A mapping without a signature check shows no mark.
    const note = await call(`${hookd.url}/hooks/note`, { headers: HOOK, json: { n: 1, who: 'me' } });
    await page.goto(`${hookd.url}/ui/#/requests/${note.headers['x-request-id']}`);
    await page.getByText('Event type').waitFor();
    expect(await page.getByTestId('signature').count()).toBe(0);
    await context.close();
  });

  it('copies a request as a curl command with the credentials left as placeholders; run, it is accepted', async () => {
    const { context, page } = await signedIn(browser, hookd.url, GATEWAY_TOKEN, {
      permissions: ['clipboard-read', 'clipboard-write'],
    });
    const body = `{"n": 5, "who": "it's me"}`;
    const sent = await call(`${hookd.url}/hooks/note`, {
      headers: { ...HOOK, 'content-type': 'application/json' },
      body,
    });
    const id = sent.headers['x-request-id'] as string;
    await page.goto(`${hookd.url}/ui/#/requests/${id}`);
    await page.getByRole('button', { name: 'Copy as curl' }).click();
    await page.getByText('Copied to the clipboard.').waitFor();
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    await expect(page.getByTestId('curl').textContent()).resolves.toBe(copied);
    expect(copied).toContain(`curl -sS -X POST '${hookd.url}/hooks/note'`);
    expect(copied).toContain(`-H "authorization: Bearer $HOOKD_HOOK_TOKEN"`);
    expect(copied).toContain(`--data-raw '{"n": 5, "who": "it'\\''s me"}'`);
    expect(copied).not.toContain(HOOK_TOKEN);
    expect(copied).not.toContain(id);
    // Run as written, with the token in its variable: a new request with the same body.
    const { stdout } = await promisify(execFile)('bash', ['-c', copied], {
      env: { ...process.env, HOOKD_HOOK_TOKEN: HOOK_TOKEN },
    });
    expect(JSON.parse(stdout)).toMatchObject({ ok: true });
    const latest = await call(`${hookd.url}/api/requests?path=note&limit=1`, { method: 'GET', headers: ADMIN });
    const again = (latest.body.requests as { id: string }[])[0]?.id;
    const resent = await call(`${hookd.url}/api/requests/${again}`, { method: 'GET', headers: ADMIN });
    expect(again).not.toBe(id);
    expect(resent.body.body).toBe(body);
    // A signed request: the signature is a placeholder, never the secret or the value sent.
    await page.goto(`${hookd.url}/ui/#/requests/${await sendPush()}`);
    await page.getByRole('button', { name: 'Copy as curl' }).click();
    const signed = (await page.getByTestId('curl').textContent()) ?? '';
    expect(signed).toContain(`-H 'x-hub-signature-256: <signature>'`);
    expect(signed).toContain(`-H 'x-github-event: push'`);
    expect(signed).not.toContain(GITHUB_SECRET);
    expect(signed).not.toMatch(/sha256=[0-9a-f]/);
    // The top of the page: its facts, the signature mark and the command.
    await page.screenshot({ path: artefact('console', 'request-curl') });
    toDocs(artefact('console', 'request-curl'), 'console-request');
    await context.close();
  });

  it("offers a preset's recorded fixtures in the playground and renders one", async () => {
    const { context, page } = await signedIn(browser, hookd.url, GATEWAY_TOKEN);
    await page.getByRole('link', { name: 'Mappings & playground' }).click();
    const fixture = page.getByLabel('Fixture');
    await fixture
      .locator('optgroup[label="preset:github"] option', { hasText: /^push: / })
      .first()
      .waitFor({
        state: 'attached',
      });
    await fixture.selectOption({ label: 'push: A push of two commits to main (JSON delivery)' });
    await page.getByText("The github preset's push fixture").waitFor();
    await expect(page.locator('select[name="path"]').inputValue()).resolves.toBe('github');
    await expect(page.getByLabel(/^Headers/).inputValue()).resolves.toContain('X-GitHub-Event: push');
    expect(JSON.parse(await page.getByLabel('Payload').inputValue())).toEqual(PUSH.body);
    await page.getByRole('button', { name: 'Render' }).click();
    const result = JSON.parse((await page.getByTestId('playground-result').textContent()) ?? '');
    expect(result).toMatchObject({ mapping: 'preset:github', actions: [{ kind: 'agent' }] });
    await page.screenshot({ path: artefact('console', 'playground-fixture'), fullPage: true });
    await context.close();
  });

  it('wraps the mappings table between words and after separators, never inside a word; no page is wider than 390 px', async () => {
    const { context, page } = await signedIn(browser, hookd.url, GATEWAY_TOKEN, {
      viewport: { width: 390, height: 844 },
    });
    await page.getByRole('link', { name: 'Mappings & playground' }).click();
    await page.locator('tr[data-mapping-id="preset:github"]').waitFor();
    const broken = await page.locator('table.mappings').evaluate((table) => {
      const found: string[] = [];
      const walker = document.createTreeWalker(table, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        // A word: letters and digits; a separator (space, `-`, `.`, `:`, …) may end a line.
        for (const word of (node.textContent ?? '').matchAll(/[\p{L}\p{N}]+/gu)) {
          const range = document.createRange();
          range.setStart(node, word.index);
          range.setEnd(node, word.index + word[0].length);
          const lines = new Set(Array.from(range.getClientRects(), (r) => Math.round(r.top)));
          if (lines.size > 1) found.push(word[0]);
        }
      }
      return found;
    });
    expect(broken).toEqual([]);
    // The page itself still never scrolls sideways: the table does, inside its box; nor do the others.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.screenshot({ path: artefact('console', 'mappings-390'), fullPage: true });
    const push = await sendPush();
    for (const [hash, heading] of [
      ['#/failed/refused', 'Failed requests'],
      ['#/runs', 'Runs'],
      [`#/requests/${push}`, `Request ${push}`],
    ] as const) {
      await page.goto(`${hookd.url}/ui/${hash}`);
      await page.getByRole('heading', { name: heading }).waitFor();
      await expect(
        page.evaluate(() => document.documentElement.scrollWidth),
        hash,
      ).resolves.toBeLessThanOrEqual(390);
    }
    await context.close();
  });

  it('moves the focus to the heading after a navigation without drawing a frame around it', async () => {
    const { context, page } = await signedIn(browser, hookd.url, GATEWAY_TOKEN);
    const runs = page.getByRole('link', { name: 'Runs', exact: true });
    await runs.focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Runs' }).waitFor();
    const heading = await page.waitForFunction(() => {
      const active = document.activeElement;
      return active?.tagName === 'H1' ? getComputedStyle(active).outlineStyle : undefined;
    });
    expect(await heading.jsonValue()).toBe('none');
    // Controls reached by the keyboard keep their focus ring.
    await page.keyboard.press('Tab');
    const ring = await page.evaluate(() => {
      const active = document.activeElement as HTMLElement;
      return { tag: active.tagName, outline: getComputedStyle(active).outlineStyle };
    });
    expect(ring.outline).toBe('solid');
    await context.close();
  });
});
