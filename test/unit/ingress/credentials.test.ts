import { createHmac } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AUTH, createTestApp, type TestApp } from '../../helpers/app.js';
import { until } from '../../helpers/clock.js';
import { makeTempDir } from '../../helpers/hookd-process.js';

/** Credential headers: masked in every stored record, never given to templates or transforms (docs/security.md#what-is-masked). */

const ROOT = join(import.meta.dirname, '../../..');
const GITLAB_SECRET = 'gitlab-secret-token-masked';
const OWN_SECRET = 'own-hmac-secret';

let t: TestApp | undefined;
const cleanups: (() => void)[] = [];
afterEach(async () => {
  await t?.close();
  t = undefined;
  for (const cleanup of cleanups.splice(0)) cleanup();
});

const ECHO = `export default function ({ headers }: { headers: Record<string, string> }) {
  return { kind: 'wake', text: JSON.stringify(headers) };
}\n`;
const THROWS = `export default function () { throw new Error('not yet'); }\n`;

/** An app whose transforms folder holds echo.ts (returns the headers it was given) and throws.ts. */
async function appWith(hooks: object, files: Record<string, string> = {}): Promise<TestApp> {
  const temp = makeTempDir();
  cleanups.push(temp.cleanup);
  mkdirSync(join(temp.dir, 'transforms'));
  writeFileSync(join(temp.dir, 'transforms/echo.ts'), ECHO);
  writeFileSync(join(temp.dir, 'transforms/throws.ts'), THROWS);
  for (const [name, source] of Object.entries(files)) writeFileSync(join(temp.dir, 'transforms', name), source);
  return createTestApp({ hooks: { transformsDir: 'transforms', ...hooks } }, { baseDir: temp.dir });
}

const table = <T>(sql: string) => (t as TestApp).store.db.prepare(sql).all() as T[];
const eventTexts = () => table<{ text: string }>('SELECT text FROM events ORDER BY seq').map((e) => e.text);

/** Every credential header of the fixed list, each with a value that must never be seen again. */
const CREDENTIALS = {
  authorization: AUTH.authorization,
  'x-service-token': 'service-token-secret',
  cookie: 'session=cookie-secret',
  'proxy-authorization': 'Basic proxy-secret',
  'x-gitlab-token': 'gitlab-header-secret',
  'x-hub-signature': 'sha1=hub-sha1-secret',
  'x-hub-signature-256': 'sha256=hub-secret',
  'stripe-signature': 't=1,v1=stripe-secret',
  'x-slack-signature': 'v0=slack-secret',
  'webhook-signature': 'v1,webhook-secret',
  'svix-signature': 'v1,svix-secret',
};
const SECRET_WORDS = /secret|hook-token-0123456789abcdef/;

describe('credential headers', () => {
  it("masks the GitLab preset's X-Gitlab-Token in the record and marks it verified", async () => {
    t = await createTestApp({ hooks: { presets: [{ name: 'gitlab', secret: GITLAB_SECRET }] } });
    const fixture = JSON.parse(
      readFileSync(join(ROOT, 'presets/gitlab/fixtures/merge-request-opened.json'), 'utf8'),
    ) as { headers: Record<string, string>; body: unknown };
    const res = await t.app.inject({
      method: 'POST',
      url: '/hooks/gitlab',
      headers: { ...fixture.headers, 'content-type': 'application/json', 'x-gitlab-token': GITLAB_SECRET },
      payload: JSON.stringify(fixture.body),
    });
    expect(res.statusCode).toBe(202);
    const [row] = table<{ headers: string; credentials: string }>('SELECT headers, credentials FROM requests');
    expect(JSON.parse(row?.headers as string)['x-gitlab-token']).toBe('[masked]');
    expect(JSON.parse(row?.credentials as string)).toEqual({ 'x-gitlab-token': { verified: true } });
    const [run] = table<{ message: string }>('SELECT message FROM runs');
    expect(run?.message).toContain('merge request');
    expect(JSON.stringify(table('SELECT * FROM requests')) + run?.message).not.toContain(GITLAB_SECRET);
  });

  it("never gives one to a template or a transform, a mapping's own HMAC header included", async () => {
    t = await appWith({
      mappings: [
        {
          id: 'template',
          match: { path: 'template' },
          action: 'wake',
          textTemplate: 'gl={{headers.x-gitlab-token}} sig={{headers.x-hub-signature-256}} ev={{headers.x-event}}',
        },
        { id: 'echo', match: { path: 'echo' }, transform: { module: 'echo.ts' } },
        {
          id: 'own',
          match: { path: 'own' },
          verify: { scheme: 'hmac', secret: OWN_SECRET, header: 'X-Own-Signature' },
          transform: { module: 'echo.ts' },
        },
      ],
    });
    const headers = { ...CREDENTIALS, 'x-event': 'push', 'content-type': 'application/json' };
    for (const path of ['template', 'echo'])
      expect((await t.app.inject({ method: 'POST', url: `/hooks/${path}`, headers, payload: '{}' })).statusCode).toBe(
        200,
      );
    const ownSignature = createHmac('sha256', OWN_SECRET).update('{}').digest('hex');
    const own = { 'x-own-signature': ownSignature, 'x-event': 'push', 'content-type': 'application/json' };
    expect((await t.app.inject({ method: 'POST', url: '/hooks/own', headers: own, payload: '{}' })).statusCode).toBe(
      200,
    );
    const [template, echo, ownEcho] = eventTexts();
    expect(template).toContain('gl= sig= ev=push');
    expect(Object.keys(JSON.parse(echo as string)).sort()).toEqual([
      'content-length',
      'content-type',
      'host',
      'user-agent',
      'x-event',
    ]);
    expect(JSON.parse(ownEcho as string)).not.toHaveProperty('x-own-signature');
    expect(eventTexts().join()).not.toMatch(SECRET_WORDS);
    // The records: every credential by name, `[masked]`; the token and the own signature verified.
    const records = table<{ headers: string; credentials: string }>('SELECT headers, credentials FROM requests');
    const stored = JSON.parse(records[0]?.headers as string) as Record<string, string>;
    for (const name of Object.keys(CREDENTIALS)) expect(stored[name]).toBe('[masked]');
    const marks = JSON.parse(records[0]?.credentials as string) as Record<string, { verified: boolean }>;
    expect(Object.entries(marks).filter(([, mark]) => mark.verified)).toEqual([['authorization', { verified: true }]]);
    expect(JSON.parse(records[2]?.credentials as string)).toEqual({ 'x-own-signature': { verified: true } });
    expect(JSON.stringify(records)).not.toMatch(SECRET_WORDS);
  });

  it("keeps a failed transform's whole body with credentials masked and redacted paths masked", async () => {
    t = await appWith({
      log: { redact: ['card.number'] },
      mappings: [{ id: 'fails', match: { path: 'fails' }, transform: { module: 'throws.ts' } }],
    });
    const payload = JSON.stringify({ card: { number: '4242 4242' }, note: 'kept' });
    const headers = { ...CREDENTIALS, 'content-type': 'application/json' };
    const res = await t.app.inject({ method: 'POST', url: '/hooks/fails?token=query-secret', headers, payload });
    expect(res.statusCode).toBe(500);
    await until(() => table('SELECT 1 FROM failed_requests').length === 1);
    const failure = t.store.failedRequests.forRequest(res.headers['x-request-id'] as string);
    expect(failure).toMatchObject({ url: '/hooks/fails', client: '127.0.0.1', redacted: true });
    expect(JSON.parse(failure?.body.toString() as string)).toEqual({ card: { number: '[redacted]' }, note: 'kept' });
    expect(failure?.headers['x-gitlab-token']).toBe('[masked]');
    expect(failure?.credentials.authorization).toEqual({ verified: true });
    expect(JSON.stringify(table('SELECT * FROM failed_requests'))).not.toMatch(/secret|4242/);
  });

  it('takes the token out of the stored URL and the query however a sender spelled its parameter', async () => {
    const ECHO_QUERY = `export default function ({ query, url }: { query: object; url: string }) {
  return { kind: 'wake', text: JSON.stringify({ query, url }) };
}\n`;
    t = await appWith(
      { mappings: [{ id: 'q', match: { path: 'q' }, transform: { module: 'q.ts' } }] },
      { 'q.ts': ECHO_QUERY },
    );
    const url = '/hooks/q?token[]=secret-a&TOKEN=secret-b&Token%5B0%5D=secret-c&%74oken=secret-d&a=1&tokens=2';
    const res = await t.app.inject({ method: 'POST', url, headers: AUTH, payload: {} });
    expect(res.statusCode).toBe(200);
    expect(JSON.parse(eventTexts()[0] as string)).toEqual({
      query: { a: '1', tokens: '2' },
      url: '/hooks/q?a=1&tokens=2',
    });
    await until(() => table('SELECT 1 FROM requests').length === 1);
    expect(table<{ url: string }>('SELECT url FROM requests')[0]?.url).toBe('/hooks/q?a=1&tokens=2');
    expect(JSON.stringify(table('SELECT * FROM requests'))).not.toMatch(/secret/);
  });

  it("masks a redacted path's value in a transform's own error, wherever the error shows", async () => {
    const QUOTES = `export default function ({ payload }: { payload: { card: { number: string; cvc: number } } }) {
  throw new Error(\`card \${payload.card.number} (cvc \${payload.card.cvc}) refused; 4242 stays\`);
}\n`;
    t = await appWith(
      {
        log: { redact: ['card'] },
        mappings: [{ id: 'quotes', match: { path: 'quotes' }, transform: { module: 'quotes.ts' } }],
      },
      { 'quotes.ts': QUOTES },
    );
    // `card` names an object: every value under it is masked, a 3-digit CVC as a word of its own.
    const payload = { card: { number: '5555-0000-1111-2222', cvc: 987 } };
    const res = await t.app.inject({ method: 'POST', url: '/hooks/quotes', headers: AUTH, payload });
    expect(res.statusCode).toBe(500);
    expect(res.json().error).toContain('card [redacted] (cvc [redacted]) refused; 4242 stays');
    await until(
      () => table('SELECT 1 FROM failed_requests').length === 1 && table('SELECT 1 FROM requests').length === 1,
    );
    const failure = t.store.failedRequests.forRequest(res.headers['x-request-id'] as string);
    expect(failure?.error).toContain('card [redacted] (cvc [redacted])');
    const stored = JSON.stringify([table('SELECT * FROM failed_requests'), table('SELECT * FROM requests')]);
    expect(stored).toContain('[redacted]');
    expect(stored).not.toMatch(/5555-0000|\b987\b/);
  });
});
