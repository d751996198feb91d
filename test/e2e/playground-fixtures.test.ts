import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { artefact, browserTestsRun, launchChromium, signedIn } from '../helpers/browser.js';
import { type HookdProcess, makeTempDir, startHookd } from '../helpers/hookd-process.js';
import { call } from '../helpers/http.js';

/**
 * The playground offers the config folder's own fixtures (the cases `hookd test` runs) beside
 * a preset's recorded ones (docs/console.md#pages): listed with the mappings, read by name.
 */

const HOOK_TOKEN = 'folder-fixtures-hook-token-0123456789';
const GATEWAY_TOKEN = 'folder-fixtures-gateway-token-0123456789';
const ADMIN = { authorization: `Bearer ${GATEWAY_TOKEN}` };
const HELLO = {
  description: 'A note from the CI',
  headers: { 'X-Source': 'ci' },
  payload: { n: 3, who: 'the CI' },
  expect: [{ kind: 'wake', text: 'note 3 from the CI' }],
};

let hookd: HookdProcess;
const cleanups: (() => Promise<unknown> | unknown)[] = [];

beforeAll(async () => {
  const temp = makeTempDir();
  cleanups.push(temp.cleanup);
  const cases = join(temp.dir, 'transforms/fixtures/note');
  mkdirSync(cases, { recursive: true });
  writeFileSync(join(cases, 'hello.json'), JSON.stringify(HELLO));
  writeFileSync(join(cases, 'broken.json'), '{ not json');
  // A FIFO named like a case: its read blocked the event loop for good (every request waited).
  execFileSync('mkfifo', [join(cases, 'stuck.json')]);
  hookd = await startHookd({
    dir: temp.dir,
    config: {
      gateway: { auth: { token: GATEWAY_TOKEN } },
      hooks: {
        enabled: true,
        token: HOOK_TOKEN,
        presets: [{ name: 'github', secret: 'folder-fixtures-github-secret' }],
        mappings: [{ id: 'note', match: { path: 'note' }, action: 'wake', textTemplate: 'note {{n}} from {{who}}' }],
      },
      agents: { defaults: { heartbeat: { every: '0' } } },
    },
  });
  cleanups.push(() => hookd.stop());
}, 60_000);

afterAll(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

describe("the config folder's fixtures in the admin API", () => {
  it("lists a mapping's cases with their kind, a preset's beside them, and reads one by name", async () => {
    const listed = await call(`${hookd.url}/api/mappings`, { method: 'GET', headers: ADMIN });
    const mappings = listed.body.mappings as { id: string; fixtures?: { name: string; kind: string }[] }[];
    // The unreadable case and the FIFO are left out, as hookd test would report them.
    expect(mappings.find((m) => m.id === 'note')?.fixtures).toEqual([
      { name: 'hello', description: 'A note from the CI', kind: 'folder' },
    ]);
    expect(mappings.find((m) => m.id === 'preset:github')?.fixtures).toContainEqual(
      expect.objectContaining({ name: 'push', kind: 'preset' }),
    );
    const read = await call(`${hookd.url}/api/mappings/note/fixtures/hello`, { method: 'GET', headers: ADMIN });
    expect(read.body).toEqual({ headers: HELLO.headers, body: HELLO.payload });
    const unknown = await call(`${hookd.url}/api/mappings/note/fixtures/nope`, { method: 'GET', headers: ADMIN });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toBe('no fixture nope (note has: broken, hello, stuck)');
    const path = await call(`${hookd.url}/api/mappings/note/fixtures/..%2Fsecret`, { method: 'GET', headers: ADMIN });
    expect(path.status).toBe(400);
    expect((await call(`${hookd.url}/api/mappings/note/fixtures/hello`, { method: 'GET' })).status).toBe(401);
  });
});

describe.skipIf(!browserTestsRun)("the config folder's fixtures in the playground", () => {
  it('offers them beside the preset fixtures and renders one', async () => {
    const browser = await launchChromium();
    cleanups.push(() => browser.close());
    const { context, page } = await signedIn(browser, hookd.url, GATEWAY_TOKEN);
    await page.getByRole('link', { name: 'Mappings & playground' }).click();
    const fixture = page.getByLabel('Fixture');
    await fixture.locator('optgroup[label="note: your fixtures"] option').first().waitFor({ state: 'attached' });
    await fixture.locator('optgroup[label="preset:github"] option').first().waitFor({ state: 'attached' });
    await fixture.selectOption({ label: 'hello: A note from the CI' });
    await page.getByText('Your fixture hello of note').waitFor();
    await expect(page.locator('select[name="path"]').inputValue()).resolves.toBe('note');
    await expect(page.getByLabel(/^Headers/).inputValue()).resolves.toBe('X-Source: ci');
    expect(JSON.parse(await page.getByLabel('Payload').inputValue())).toEqual(HELLO.payload);
    await page.getByRole('button', { name: 'Render' }).click();
    const result = JSON.parse((await page.getByTestId('playground-result').textContent()) ?? '');
    expect(result).toMatchObject({ mapping: 'note', actions: HELLO.expect });
    await page.screenshot({ path: artefact('console', 'playground-folder-fixture'), fullPage: true });
    await context.close();
  });
});
