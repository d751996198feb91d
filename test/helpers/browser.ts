import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, type BrowserContext, type BrowserContextOptions, chromium, type Page } from 'playwright-core';
import { ROOT } from './hookd-process.js';

/** Debian's chromium package (installed by .ci/run); Playwright's own download is not used. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

// Like Dovecot for the mail tests: on a machine without Chromium the browser tests are skipped
// (and say so), except under CI, where a missing Chromium fails them.
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium && !process.env.CI)
  console.warn(`browser tests skipped: no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`);
/** Whether the browser e2e files run here. */
export const browserTestsRun = hasChromium || Boolean(process.env.CI);

/** Screenshots of browser tests: a test artefact, not committed (see .gitignore). */
export const ARTEFACTS = join(ROOT, 'test/artefacts');

/** A headless Chromium; `--no-sandbox` because CI runs as root. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(`no Chromium at ${CHROMIUM}: apt-get install chromium (or set CHROMIUM_PATH)`);
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: process.getuid?.() === 0 ? ['--no-sandbox'] : [],
  });
}

/** Where a test's screenshot goes: test/artefacts/<folder>/<name>.png. */
export function artefact(folder: string, name: string): string {
  const dir = join(ARTEFACTS, folder);
  mkdirSync(dir, { recursive: true });
  return join(dir, `${name}.png`);
}

/** Set by `npm run docs:shots` (HOOKD_DOCS_SCREENSHOTS=1) to refresh the screenshots docs/ shows from the browser tests. */
export const refreshDocs = process.env.HOOKD_DOCS_SCREENSHOTS === '1';

/** Copies a test's screenshot over docs/<name>.png, when refreshing them. */
export function toDocs(screenshot: string, name: string): void {
  if (refreshDocs) copyFileSync(screenshot, join(ROOT, 'docs', `${name}.png`));
}

/** A fresh browser profile on the console at `url`, signed in through the form with the gateway token. */
export async function signedIn(
  browser: Browser,
  url: string,
  gatewayToken: string,
  options: BrowserContextOptions = {},
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, ...options });
  // Well within vitest's time per test: a step that waits in vain names itself.
  context.setDefaultTimeout(10_000);
  const page = await context.newPage();
  await page.goto(`${url}/ui/`);
  await page.getByLabel('Gateway token').fill(gatewayToken);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Live log' }).waitFor();
  return { context, page };
}

/** Waits until the page's live stream is connected, so nothing sent afterwards is missed. */
export const liveOpen = (page: Page) => page.locator('.live[data-state="open"]').waitFor();
