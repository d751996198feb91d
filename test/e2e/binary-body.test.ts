import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RequestDetail } from '../../src/views.js';
import { browserTestsRun, launchChromium, signedIn } from '../helpers/browser.js';
import { type HookdProcess, startHookd } from '../helpers/hookd-process.js';
import { call, until } from '../helpers/http.js';
import { type SuiteStore, suiteStore, suiteStores } from '../helpers/postgres.js';

/**
 * A body that is not valid UTF-8 (docs/runtime.md#request-log-and-replay): kept byte for byte
 * (within hooks.log.maxBodyBytes), shown by the API as base64 with a mark and by the console as
 * text with `\xNN` escapes; a replay sends the bytes that came. On both stores.
 */

const HOOK_TOKEN = 'binary-hook-token-0123456789';
const GATEWAY_TOKEN = 'binary-gateway-token-0123456789';
const HOOK = { authorization: `Bearer ${HOOK_TOKEN}`, 'content-type': 'application/json' };
const ADMIN = { authorization: `Bearer ${GATEWAY_TOKEN}` };
const MAX_BODY_BYTES = 1024;
/** JSON as a sender writing Latin-1 sends it: "José" with a lone 0xe9. */
const LATIN1 = Buffer.concat([Buffer.from('{"n":1,"who":"Jos'), Buffer.from([0xe9]), Buffer.from('"}')]);
/** Not JSON at all: a byte-order mark of UTF-16 and a stray continuation byte. */
const BINARY = Buffer.from([0xff, 0xfe, 0x7b, 0x22, 0x61, 0x22, 0x3a, 0x80, 0x7d]);

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

let store: SuiteStore;

async function gateway(): Promise<HookdProcess> {
  const hookd = await startHookd({
    config: {
      gateway: { auth: { token: GATEWAY_TOKEN } },
      hooks: {
        enabled: true,
        token: HOOK_TOKEN,
        log: { maxBodyBytes: MAX_BODY_BYTES },
        mappings: [{ id: 'note', match: { path: 'note' }, action: 'wake', textTemplate: 'note {{n}} from {{who}}' }],
      },
      agents: { defaults: { heartbeat: { every: '0' } } },
      storage: await store.storage(`binary-${Date.now()}`),
    },
  });
  cleanups.push(() => hookd.stop());
  return hookd;
}

/** A request's record, once it is logged. */
const detail = (hookd: HookdProcess, id: string) =>
  until(async () => {
    const got = await call(`${hookd.url}/api/requests/${id}`, { method: 'GET', headers: ADMIN });
    return got.status === 200 ? (got.body as unknown as RequestDetail) : undefined;
  }, `the record of ${id}`);

describe.each(suiteStores)('a body that is not valid UTF-8, on %s', (kind) => {
  beforeAll(() => {
    store = suiteStore(kind);
  });
  afterAll(() => store.stop());

  it('is kept byte for byte as base64 with a mark, cut at the log bound, and replayed as it came', async () => {
    const hookd = await gateway();
    const accepted = await call(`${hookd.url}/hooks/note`, { headers: HOOK, body: LATIN1 });
    expect(accepted.status).toBe(200);
    const refused = await call(`${hookd.url}/hooks/note`, { headers: HOOK, body: BINARY });
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe('INVALID_JSON');
    const large = Buffer.alloc(MAX_BODY_BYTES + 100, 0xff);
    const cut = await call(`${hookd.url}/hooks/note`, { headers: HOOK, body: large });

    const kept = await detail(hookd, accepted.headers['x-request-id'] as string);
    expect(kept).toMatchObject({ bodyEncoding: 'base64', bodyWhole: true, bodyBytes: LATIN1.length });
    expect(Buffer.from(kept.body, 'base64')).toEqual(LATIN1);
    const binary = await detail(hookd, refused.headers['x-request-id'] as string);
    expect(binary.bodyEncoding).toBe('base64');
    expect(Buffer.from(binary.body, 'base64')).toEqual(BINARY);
    const bounded = await detail(hookd, cut.headers['x-request-id'] as string);
    expect(bounded).toMatchObject({ bodyEncoding: 'base64', truncated: true, bodyBytes: large.length });
    expect(Buffer.from(bounded.body, 'base64')).toEqual(large.subarray(0, MAX_BODY_BYTES));
    // Text stays text: no mark on a body that is valid UTF-8.
    const text = await call(`${hookd.url}/hooks/note`, { headers: HOOK, json: { n: 2, who: 'José' } });
    const plain = await detail(hookd, text.headers['x-request-id'] as string);
    expect(plain.bodyEncoding).toBeUndefined();
    expect(plain.body).toBe('{"n":2,"who":"José"}');

    const replay = await call(`${hookd.url}/api/requests/${accepted.headers['x-request-id']}/replay`, {
      headers: ADMIN,
    });
    expect(replay.status).toBe(200);
    const replayed = await detail(hookd, replay.headers['x-request-id'] as string);
    expect(replayed.replayOf).toBe(accepted.headers['x-request-id']);
    expect(replayed.bodyEncoding).toBe('base64');
    expect(Buffer.from(replayed.body, 'base64')).toEqual(LATIN1);
  });
});

describe.skipIf(!browserTestsRun)("a body that is not valid UTF-8 on the console's request page", () => {
  beforeAll(() => {
    store = suiteStore('sqlite');
  });

  it('shows it as text with escapes for the bytes that are not, and says so', async () => {
    const hookd = await gateway();
    const refused = await call(`${hookd.url}/hooks/note`, { headers: HOOK, body: BINARY });
    await detail(hookd, refused.headers['x-request-id'] as string);
    const browser = await launchChromium();
    cleanups.push(() => browser.close());
    const { context, page } = await signedIn(browser, hookd.url, GATEWAY_TOKEN);
    await page.goto(`${hookd.url}/ui/#/requests/${refused.headers['x-request-id']}`);
    await page.getByTestId('binary-body').waitFor();
    expect(await page.locator('pre.payload').first().textContent()).toBe('\\xff\\xfe{"a":\\x80}');
    await context.close();
  });
});
