import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeModel } from '../helpers/fake-model.js';
import { type Gateway, startGateway } from '../helpers/gateway.js';
import { type HookdProcess, makeTempDir, startHookd } from '../helpers/hookd-process.js';
import { call, until } from '../helpers/http.js';

/** The console's pages and API over HTTP, without a browser (docs/runtime.md#request-log-and-replay). */

const HOOK_TOKEN = 'capi-hook-token-0123456789';
const GATEWAY_TOKEN = 'capi-gateway-token-0123456789';
const HOOK = { authorization: `Bearer ${HOOK_TOKEN}` };
const ADMIN = { authorization: `Bearer ${GATEWAY_TOKEN}` };

const UPPER = `export default function ({ payload }: { payload: { text: string } }) {
  if (payload.text === 'boom') throw new Error('boom');
  return { kind: 'wake', text: payload.text.toUpperCase() };
}\n`;

let hookd: HookdProcess;
let model: FakeModel;
let gateway: Gateway | undefined;
/** What a test starts beside the gateway, stopped after the file. */
const cleanups: (() => Promise<unknown> | unknown)[] = [];

beforeAll(async () => {
  gateway = await startGateway({
    hookToken: HOOK_TOKEN,
    gatewayToken: GATEWAY_TOKEN,
    reply: () => 'agent reply',
    files: { 'transforms/upper.ts': UPPER },
    hooks: {
      transformsDir: 'transforms',
      mappings: [
        { id: 'upper', match: { path: 'upper' }, transform: { module: 'upper.ts' } },
        {
          id: 'gh',
          match: { path: 'gh', headers: { 'x-github-event': 'push' } },
          verify: { scheme: 'github', secret: 'gh-secret' },
          action: 'wake',
          textTemplate: 'push to {{repository.full_name}}',
        },
      ],
    },
  });
  ({ hookd, model } = gateway);
}, 60_000);

afterAll(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
  await gateway?.stop();
});

const admin = (path: string, json?: unknown) =>
  call(`${hookd.url}${path}`, { method: json === undefined ? 'GET' : 'POST', headers: ADMIN, json });

async function signIn(): Promise<{ cookie: string; csrf: string }> {
  const answer = await call(`${hookd.url}/ui/login`, {
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: `token=${encodeURIComponent(GATEWAY_TOKEN)}`,
  });
  expect(answer.status).toBe(303);
  const setCookie = String(answer.headers['set-cookie']);
  const cookie = setCookie.split(';')[0] as string;
  const shell = await call(`${hookd.url}/ui/`, { method: 'GET', headers: { cookie } });
  const csrf = /<meta name="csrf-token" content="([^"]+)">/.exec(shell.text)?.[1];
  if (!csrf) throw new Error(`no CSRF token in ${shell.text}`);
  return { cookie, csrf };
}

describe('the console over HTTP', () => {
  it('serves the sign-in page, then the shell and the bundled app, with a strict CSP and nothing from elsewhere', async () => {
    const page = await call(`${hookd.url}/ui/`, { method: 'GET' });
    expect(page.status).toBe(200);
    expect(page.text).toContain('<form method="post" action="/ui/login">');
    expect(page.headers['content-security-policy']).toContain("default-src 'self'");
    expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.text).not.toMatch(/https?:\/\/(?!127\.)/);

    const wrong = await call(`${hookd.url}/ui/login`, {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'token=nope',
    });
    expect(wrong.status).toBe(401);
    expect(wrong.headers['set-cookie']).toBeUndefined();
    const { cookie } = await signIn();
    const app = await call(`${hookd.url}/ui/app.js`, { method: 'GET', headers: { cookie } });
    expect(app.status).toBe(200);
    expect(app.headers['content-type']).toContain('text/javascript');
    expect(app.text).toContain('/api/stream');
    expect(app.text).not.toMatch(/import\s*["']https?:/);
    const css = await call(`${hookd.url}/ui/app.css`, { method: 'GET' });
    expect(css.headers['content-type']).toContain('text/css');
  });

  it('opens the admin API to a session cookie; a change needs the CSRF token', async () => {
    const { cookie, csrf } = await signIn();
    expect((await call(`${hookd.url}/api/requests`, { method: 'GET', headers: { cookie } })).status).toBe(200);
    const tried = { path: 'upper', body: '{"text":"hi"}' };
    const refused = await call(`${hookd.url}/api/try`, { headers: { cookie }, json: tried });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('CSRF_REFUSED');
    const allowed = await call(`${hookd.url}/api/try`, { headers: { cookie, 'x-csrf-token': csrf }, json: tried });
    expect(allowed.status).toBe(200);
    // A cookie of another session's CSRF token is no good either.
    const other = await signIn();
    const crossed = await call(`${hookd.url}/api/try`, {
      headers: { cookie, 'x-csrf-token': other.csrf },
      json: tried,
    });
    expect(crossed.status).toBe(403);
  });

  it('lists the mappings in force', async () => {
    const { body } = await admin('/api/mappings');
    expect(body.mappings).toEqual([
      {
        id: 'upper',
        configPath: 'hooks.mappings[0]',
        path: 'upper',
        transform: 'upper.ts',
        schema: false,
        eventType: 'transform',
      },
      {
        id: 'gh',
        configPath: 'hooks.mappings[1]',
        path: 'gh',
        headers: ['x-github-event: push'],
        verify: 'github',
        schema: false,
      },
    ]);
  });

  it('dry-runs a payload like hookd try: actions, unresolved names and the live errors, storing nothing', async () => {
    const before = ((await admin('/api/requests')).body.requests as unknown[]).length;
    expect((await admin('/api/try', { path: 'upper', body: '{"text":"hi"}' })).body).toEqual({
      ok: true,
      mapping: 'upper',
      actions: [expect.objectContaining({ kind: 'wake', text: 'HI' })],
    });
    const gh = await admin('/api/try', {
      path: 'gh',
      body: '{"repository":{}}',
      headers: { 'X-GitHub-Event': 'push' },
    });
    expect(gh.body).toMatchObject({
      mapping: 'gh',
      actions: [{ text: 'push to ' }],
      unresolved: ['hooks.mappings[1].textTemplate: {{repository.full_name}}'],
    });
    expect((await admin('/api/try', { path: 'agent', body: '{"message":"x"}' })).body).toMatchObject({
      actions: [{ kind: 'agent', message: 'x' }],
    });
    const failing = await admin('/api/try', { path: 'upper', body: '{"text":"boom"}' });
    expect([failing.status, failing.body.code]).toEqual([500, 'TRANSFORM_FAILED']);
    expect((await admin('/api/try', { path: 'nothing', body: '{}' })).body.code).toBe('NO_MAPPING');
    expect((await admin('/api/try', { path: 'upper', body: '{' })).status).toBe(400);
    for (const bad of [{ body: '{}' }, { path: 'a b', body: '{}' }, { path: 'upper', body: {} }]) {
      const answer = await admin('/api/try', bad);
      expect([answer.status, answer.body.code]).toEqual([400, 'INVALID_FIELD']);
    }
    expect((await admin('/api/try', { path: 'upper', body: '{}', headers: { a: 1 } })).status).toBe(400);
    expect(((await admin('/api/requests')).body.requests as unknown[]).length).toBe(before);
    expect(model.requests).toEqual([]);
  });

  it('gives the overview, the sessions and a run’s transcript', async () => {
    expect((await call(`${hookd.url}/hooks/upper`, { headers: HOOK, json: { text: 'hello' } })).status).toBe(200);
    expect((await call(`${hookd.url}/hooks/upper`, { headers: HOOK, json: { text: 'boom' } })).status).toBe(500);
    const agent = await call(`${hookd.url}/hooks/agent`, {
      headers: HOOK,
      json: { message: 'summarise', sessionKey: 'hook:capi', deliver: false },
    });
    expect(agent.status).toBe(202);
    const runId = agent.body.runId as string;
    const transcript = await until(async () => {
      const { body } = await admin(`/api/runs/${runId}/transcript`);
      return (body.messages as unknown[] | undefined)?.length === 2 ? body : undefined;
    }, 'the run to end');
    expect(transcript).toMatchObject({
      runId,
      sessionKey: 'hook:capi',
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      startedAt: expect.any(String),
      finishedAt: expect.any(String),
      messages: [
        { role: 'user', content: expect.stringContaining('summarise') },
        { role: 'assistant', content: 'agent reply' },
      ],
    });
    expect((await admin('/api/runs/nope/transcript')).status).toBe(404);

    const { body: sessions } = await admin('/api/sessions');
    expect(sessions.sessions).toContainEqual({ key: 'hook:capi', messages: 2, lastAt: expect.any(String) });

    const { body: overview } = await admin('/api/overview');
    expect(overview).toMatchObject({
      requestsLastHour: { total: 3, failed: 1 },
      runsByStatus: { ok: 1 },
      queueDepth: 0,
      transforms: { calls: expect.any(Number), meanMs: expect.any(Number), p95AtMostMs: expect.any(Number) },
    });
    expect((overview.transforms as { calls: number }).calls).toBeGreaterThanOrEqual(2);
  });

  it('ends a session’s live streams at its sign-out, and caps the streams one session holds', async () => {
    const { cookie, csrf } = await signIn();
    const streams = await Promise.all(
      Array.from({ length: 4 }, () => request(`${hookd.url}/api/stream`, { headers: { cookie } })),
    );
    expect(streams.map((s) => s.statusCode)).toEqual([200, 200, 200, 200]);
    const fifth = await call(`${hookd.url}/api/stream`, { method: 'GET', headers: { cookie } });
    expect([fifth.status, fifth.body.code]).toEqual([503, 'STREAMS_FULL']);
    const ended = streams.map((s) => new Promise<void>((resolve) => s.body.on('end', resolve).resume()));
    const out = await call(`${hookd.url}/ui/logout`, {
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: `csrf=${encodeURIComponent(csrf)}`,
    });
    expect(out.status).toBe(303);
    const started = Date.now();
    await Promise.all(ended);
    // At sign-out, not at the streams' next ping 15 s away (which ends an expired session's).
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('refuses another site: a cross-site sign-out, and reads with the cookie from a sibling site', async () => {
    const { cookie } = await signIn();
    const crossOut = await call(`${hookd.url}/ui/logout`, {
      headers: { 'sec-fetch-site': 'cross-site', 'content-type': 'application/x-www-form-urlencoded' },
      body: '',
    });
    expect(crossOut.status).toBe(403);
    expect(crossOut.headers['set-cookie']).toBeUndefined();
    const sibling = await call(`${hookd.url}/api/requests`, {
      method: 'GET',
      headers: { cookie, 'sec-fetch-site': 'same-site' },
    });
    expect([sibling.status, sibling.body.code]).toEqual([403, 'CSRF_REFUSED']);
    const typed = await call(`${hookd.url}/api/requests`, {
      method: 'GET',
      headers: { cookie, 'sec-fetch-site': 'none' },
    });
    expect(typed.status).toBe(200);
  });

  it('reads at most 4 KiB of a sign-in, whatever its type', async () => {
    const big = await call(`${hookd.url}/ui/login`, { json: { token: 'x'.repeat(100_000) } });
    expect(big.status).toBe(413);
  });

  it('works behind a TLS-terminating proxy once server.trustProxy names it', async () => {
    const temp = makeTempDir();
    cleanups.push(temp.cleanup);
    const proxied = await startHookd({
      dir: temp.dir,
      config: {
        server: { trustProxy: ['127.0.0.1'] },
        gateway: { auth: { token: GATEWAY_TOKEN } },
        hooks: { enabled: true, token: HOOK_TOKEN },
        agents: { defaults: { model: 'builtin/echo', heartbeat: { every: '0' } } },
      },
    });
    cleanups.push(() => proxied.stop());
    const viaProxy = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'gw.example', origin: 'https://gw.example' };
    const login = await call(`${proxied.url}/ui/login`, {
      headers: { ...viaProxy, 'content-type': 'application/x-www-form-urlencoded' },
      body: `token=${GATEWAY_TOKEN}`,
    });
    expect(login.status).toBe(303);
    const setCookie = String(login.headers['set-cookie']);
    expect(setCookie).toMatch(
      /^__Host-hookd_session=[^;]+; Path=\/; HttpOnly; SameSite=Strict; Max-Age=43200; Secure$/,
    );
    const cookie = setCookie.split(';')[0] as string;
    const shell = await call(`${proxied.url}/ui/`, { method: 'GET', headers: { ...viaProxy, cookie } });
    expect(shell.text).toContain('meta name="csrf-token"');
    // The session is read over HTTPS only, and only under its __Host- name.
    const value = cookie.slice(cookie.indexOf('=') + 1);
    const plainName = await call(`${proxied.url}/ui/`, {
      method: 'GET',
      headers: { ...viaProxy, cookie: `hookd_session=${value}` },
    });
    expect(plainName.text).toContain('action="/ui/login"');
    const overHttp = await call(`${proxied.url}/ui/`, {
      method: 'GET',
      headers: { ...viaProxy, 'x-forwarded-proto': 'http', cookie },
    });
    expect(overHttp.text).toContain('action="/ui/login"');
    const csrf = /<meta name="csrf-token" content="([^"]+)">/.exec(shell.text)?.[1] ?? '';
    const signOut = await call(`${proxied.url}/ui/logout`, {
      headers: { ...viaProxy, cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: `csrf=${encodeURIComponent(csrf)}`,
    });
    expect(signOut.status).toBe(303);
    expect(String(signOut.headers['set-cookie'])).toBe(
      '__Host-hookd_session=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0; Secure',
    );
    // Without the proxy named, the forwarded origin is not this gateway's.
    const direct = await call(`${hookd.url}/ui/login`, {
      headers: { ...viaProxy, 'content-type': 'application/x-www-form-urlencoded' },
      body: `token=${GATEWAY_TOKEN}`,
    });
    expect(direct.status).toBe(403);
  });

  it('over plain HTTP, sets hookd_session without Secure, whatever X-Forwarded-Proto an untrusted peer sends', async () => {
    const plainCookie = /^hookd_session=[^;]+; Path=\/; HttpOnly; SameSite=Strict; Max-Age=43200$/;
    const direct = await call(`${hookd.url}/ui/login`, {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `token=${GATEWAY_TOKEN}`,
    });
    expect(String(direct.headers['set-cookie'])).toMatch(plainCookie);
    // server.trustProxy is off here: the header is the client's say-so, not a proxy's.
    const claimed = await call(`${hookd.url}/ui/login`, {
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-proto': 'https' },
      body: `token=${GATEWAY_TOKEN}`,
    });
    expect(String(claimed.headers['set-cookie'])).toMatch(plainCookie);
    const cookie = String(claimed.headers['set-cookie']).split(';')[0] as string;
    const shell = await call(`${hookd.url}/ui/`, { method: 'GET', headers: { cookie } });
    expect(shell.text).toContain('meta name="csrf-token"');
    const secureName = await call(`${hookd.url}/ui/`, {
      method: 'GET',
      headers: { cookie: `__Host-${cookie}` },
    });
    expect(secureName.text).toContain('action="/ui/login"');
    const csrf = /<meta name="csrf-token" content="([^"]+)">/.exec(shell.text)?.[1] ?? '';
    const signOut = await call(`${hookd.url}/ui/logout`, {
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: `csrf=${encodeURIComponent(csrf)}`,
    });
    expect(String(signOut.headers['set-cookie'])).toBe('hookd_session=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0');
  });

  it('answers the operator’s routes only by a loopback name: a rebound name is 421, whatever it adds; a hook passes', async () => {
    const rebound = { host: `rebind.attacker.example:${new URL(hookd.url).port}` };
    const asked = async (path: string, headers: Record<string, string>, init: { body?: string } = {}) =>
      (await call(`${hookd.url}${path}`, { method: init.body === undefined ? 'GET' : 'POST', headers, ...init }))
        .status;
    for (const path of ['/healthz', '/metrics', '/api/requests', '/ui/', '/ui/app.js'])
      expect([path, await asked(path, { ...ADMIN, ...rebound })]).toEqual([path, 421]);
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    expect(await asked('/ui/login', { ...form, ...rebound }, { body: `token=${GATEWAY_TOKEN}` })).toBe(421);
    // The API's answers are kept by no cache and read as no page, refused ones included.
    for (const [path, headers] of [
      ['/api/requests', ADMIN],
      ['/api/requests', {}],
      ['/metrics', rebound],
    ] as const) {
      const api = await call(`${hookd.url}${path}`, { method: 'GET', headers });
      expect([api.headers['cache-control'], api.headers['x-content-type-options']]).toEqual(['no-store', 'nosniff']);
    }
    const refused = await call(`${hookd.url}/metrics`, { method: 'GET', headers: rebound });
    expect(refused.body).toMatchObject({ code: 'HOST_NOT_ALLOWED' });
    // A rebound page is same-origin: it may send X-Forwarded-For or Forwarded, which prove nothing.
    expect(await asked('/api/requests', { ...ADMIN, ...rebound, 'x-forwarded-for': '203.0.113.5' })).toBe(421);
    expect(await asked('/healthz', { forwarded: 'for=203.0.113.5', ...rebound })).toBe(421);
    expect(await asked('/healthz', { host: 'LOCALHOST:1' })).toBe(200);
    expect(await asked('/healthz', { host: 'localhost.' })).toBe(200);
    expect(await asked('/healthz', { host: '[::1]:8787' })).toBe(200);
    const hook = await call(`${hookd.url}/hooks/upper`, {
      headers: { authorization: `Bearer ${HOOK_TOKEN}`, ...rebound },
      json: { text: 'from a tunnel' },
    });
    expect(hook.status).toBe(200);
  });

  it('counts no request without a token: 25 a cross-site page makes do not lock the sign-in', async () => {
    // What any page the operator visits can make the browser send: images and links, no token, no cookie.
    for (let i = 0; i < 25; i++) {
      const fetched = await call(`${hookd.url}/api/requests?i=${i}`, {
        method: 'GET',
        headers: { 'sec-fetch-site': 'cross-site', 'sec-fetch-dest': 'image' },
      });
      expect(fetched.status).toBe(401);
    }
    const empty = await call(`${hookd.url}/ui/login`, {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'token=',
    });
    expect(empty.status).toBe(401);
    // Had they counted, this guess would be past the 20 that lock the address.
    const guess = await call(`${hookd.url}/ui/login`, {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'token=one-wrong-guess',
    });
    expect(guess.status).toBe(401);
    await signIn();
  });

  it('counts failed sign-ins with the admin API’s failures: 20 in a minute lock both, the right token too, not a session', async () => {
    // Last in the file: it locks the loopback address out for a minute.
    const before = (await admin('/api/requests')).status;
    expect(before).toBe(200);
    const session = await signIn();
    for (let i = 0; i < 20; i++)
      await call(`${hookd.url}/ui/login`, {
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `token=guess-${i}`,
      });
    const locked = await call(`${hookd.url}/ui/login`, {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'token=guess-20',
    });
    expect(locked.status).toBe(429);
    expect((await call(`${hookd.url}/api/requests`, { method: 'GET' })).status).toBe(429);
    // The right token is refused as well while the lock lasts: a 303 or a 200 among the 429s
    // would tell a guesser it found it (docs/security.md#throttling).
    const right = await call(`${hookd.url}/ui/login`, {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `token=${GATEWAY_TOKEN}`,
    });
    expect(right.status).toBe(429);
    expect(right.headers['set-cookie']).toBeUndefined();
    const bearer = await admin('/api/requests');
    expect(bearer.status).toBe(429);
    // A session signed in before the lock goes on.
    expect(
      (await call(`${hookd.url}/api/requests`, { method: 'GET', headers: { cookie: session.cookie } })).status,
    ).toBe(200);
  });
});
