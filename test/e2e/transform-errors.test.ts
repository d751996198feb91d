import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserTestsRun, launchChromium } from '../helpers/browser.js';
import { type HookdProcess, makeTempDir, runHookd, startHookd } from '../helpers/hookd-process.js';
import { call, until } from '../helpers/http.js';

/**
 * A transform that throws is reported at its author's `file:line:column` everywhere the
 * operator looks (docs/transforms.md#when-a-transform-throws): the HTTP answer, `hookd try`,
 * the request log, the console's request page and the gateway's log.
 */

const HOOK_TOKEN = 'errors-hook-token-0123456789';
const GATEWAY_TOKEN = 'errors-gateway-token-0123456789';
const HOOK = { authorization: `Bearer ${HOOK_TOKEN}` };
const ADMIN = { authorization: `Bearer ${GATEWAY_TOKEN}` };

// Throws on line 5, column 32 (`.name` of an undefined `meter`), inside a helper of the same file.
const METERLY = `// Usage events from Meterly.
type Usage = { meter?: { name?: string }; units: number };

function meterName(usage: Usage): string {
  const name = usage.meter!.name!.toUpperCase();
  return name;
}

export default function transform({ payload }: { payload: Usage }) {
  return { message: \`\${payload.units} units of \${meterName(payload)}\` };
}
`;
const AT = 'meterly.ts:5:29';
const CODE_FRAME = [
  '  4 | function meterName(usage: Usage): string {',
  '> 5 |   const name = usage.meter!.name!.toUpperCase();',
  '    |                             ^',
  '  6 |   return name;',
].join('\n');

let dir: string;
let config: string;
let payload: string;
let hookd: HookdProcess;
const cleanups: (() => Promise<unknown> | unknown)[] = [];

beforeAll(async () => {
  const temp = makeTempDir();
  cleanups.push(temp.cleanup);
  dir = temp.dir;
  mkdirSync(join(dir, 'transforms'));
  writeFileSync(join(dir, 'transforms/meterly.ts'), METERLY);
  payload = join(dir, 'usage.json');
  writeFileSync(payload, JSON.stringify({ units: 3 }));
  hookd = await startHookd({
    dir,
    config: {
      gateway: { auth: { token: GATEWAY_TOKEN } },
      hooks: {
        enabled: true,
        token: HOOK_TOKEN,
        transformsDir: 'transforms',
        mappings: [{ id: 'meterly', match: { path: 'meterly' }, transform: { module: 'meterly.ts' } }],
      },
      agents: { defaults: { heartbeat: { every: '0' } } },
    },
  });
  cleanups.push(() => hookd.stop());
  config = join(dir, 'hookd.json5');
}, 30_000);

afterAll(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

describe("a transform that throws, at its author's file:line:column", () => {
  let requestId: string;

  it('answers 500 TRANSFORM_FAILED with the location and the message, within 1 KiB, no host path', async () => {
    const answer = await call(`${hookd.url}/hooks/meterly`, { headers: HOOK, json: { units: 3 } });
    expect(answer.status).toBe(500);
    expect(answer.body).toEqual({
      ok: false,
      code: 'TRANSFORM_FAILED',
      error: `transform failed: ${AT}: Cannot read properties of undefined (reading 'name')`,
    });
    expect(JSON.stringify(answer.body)).not.toContain(dir);
    requestId = answer.headers['x-request-id'] as string;
  });

  it('logs a warn line naming the mapping, with the message and the location', async () => {
    const line = await until(async () => {
      const lines = hookd.stdout().split('\n').filter(Boolean);
      return lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === 'transform failed');
    }, 'the warn line of the failed transform');
    expect(line).toMatchObject({
      level: 40,
      mapping: 'meterly',
      code: 'TRANSFORM_FAILED',
      at: AT,
      error: expect.stringContaining(`${AT}: Cannot read properties of undefined`),
      reqId: requestId,
    });
  });

  it('keeps the located text, frames and code frame in the request log (GET /api/requests/:id)', async () => {
    const detail = await call(`${hookd.url}/api/requests/${requestId}`, { method: 'GET', headers: ADMIN });
    expect(detail.status).toBe(200);
    expect(detail.body).toMatchObject({ status: 500, code: 'TRANSFORM_FAILED', mappingId: 'meterly' });
    const failure = detail.body.failure as { code: string; error: string };
    expect(failure.code).toBe('TRANSFORM_FAILED');
    expect(failure.error.split('\n').slice(0, 3)).toEqual([
      `transform failed: ${AT}: Cannot read properties of undefined (reading 'name')`,
      `    at meterName (${AT})`,
      expect.stringMatching(/^ {4}at transform \(meterly\.ts:10:\d+\)$/),
    ]);
    expect(failure.error.endsWith(`\n${CODE_FRAME}`)).toBe(true);
    expect(failure.error.length).toBeLessThanOrEqual(1024);
  });

  it('prints the message, location, frames and code frame in `hookd try`, and a structured form with --json', async () => {
    const human = await runHookd(['try', 'meterly', '--payload', payload, '--config', config], { cwd: dir });
    expect(human.code).toBe(1);
    expect(human.stderr).toContain(
      `hookd: transform failed: ${AT}: Cannot read properties of undefined (reading 'name') (TRANSFORM_FAILED, HTTP 500)\n    at meterName (${AT})\n`,
    );
    expect(human.stderr).toContain(`\n\n${CODE_FRAME}\n`);

    const json = await runHookd(['try', 'meterly', '--payload', payload, '--config', config, '--json'], { cwd: dir });
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toEqual({
      ok: false,
      status: 500,
      error: {
        code: 'TRANSFORM_FAILED',
        message: `transform failed: ${AT}: Cannot read properties of undefined (reading 'name')`,
        location: { file: 'meterly.ts', line: 5, column: 29 },
        frames: [`at meterName (${AT})`, expect.stringMatching(/^at transform \(meterly\.ts:10:\d+\)$/)],
        codeFrame: CODE_FRAME,
      },
    });
  });

  it.skipIf(!browserTestsRun)("shows the location and the code frame on the console's request page", async () => {
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      await page.goto(`${hookd.url}/ui/`);
      await page.getByLabel('Gateway token').fill(GATEWAY_TOKEN);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Live log' }).waitFor();
      await page.goto(`${hookd.url}/ui/#/requests/${requestId}`);
      const shown = page.getByTestId('failure');
      await shown.waitFor();
      const text = (await shown.textContent()) ?? '';
      expect(text).toContain(`transform failed: ${AT}: Cannot read properties of undefined`);
      expect(text).toContain(CODE_FRAME);
    } finally {
      await browser.close();
    }
  });
});
