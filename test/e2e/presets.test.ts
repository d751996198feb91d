import { createHash, createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { sign as signGitHub } from '@octokit/webhooks-methods';
import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtInPresets } from '../../src/mapping/presets.js';
import { type FakeModel, lastUser, startFakeModel } from '../helpers/fake-model.js';
import { type HookdProcess, makeTempDir, startHookd } from '../helpers/hookd-process.js';
import { type Answer, call } from '../helpers/http.js';

/**
 * Every recorded fixture of every built-in preset, end to end: the delivery, signed
 * the way its provider's own library signs it (or carrying the hook token, for senders that sign
 * nothing), reaches a spawned gateway and becomes the actions it expects; a tampered one is
 * refused 401; a repeat is deduplicated. The cases come from the presets' folders: a new preset
 * that uses a known scheme needs a folder, not new test code.
 */
const SECRETS: Record<string, string> = {
  github: "It's a Secret to Everybody",
  gitlab: 'gitlab-secret-token-0123',
  slack: '8f742231b10e8888abcd99yyyzzz85a5',
  stripe: 'whsec_test_0123456789abcdef',
  'standard-webhooks': `whsec_${Buffer.from('standard-webhooks-key').toString('base64')}`,
};
const HOOK_TOKEN = 'preset-hook-token-0123456789';
const GATEWAY_TOKEN = 'preset-gateway-token-0123456789';
const bearer = { authorization: `Bearer ${HOOK_TOKEN}` };
const PRESETS = [...builtInPresets().values()];
const schemeOf = (name: string) => PRESETS.find((p) => p.name === name)?.verify?.scheme;

let model: FakeModel;
let hookd: HookdProcess;
const temp = makeTempDir();

beforeAll(async () => {
  model = await startFakeModel((request) => `seen: ${lastUser(request).length} characters`);
  hookd = await startHookd({
    dir: temp.dir,
    config: {
      server: { trustProxy: true },
      gateway: { auth: { token: GATEWAY_TOKEN } },
      hooks: {
        enabled: true,
        token: HOOK_TOKEN,
        // A signed preset is enabled with its secret, the others by name.
        presets: PRESETS.map((p) => (p.verify ? { name: p.name, [p.verify.secretOption]: SECRETS[p.name] } : p.name)),
      },
      agents: { defaults: { model: 'fake/m', heartbeat: { every: '0' } } },
      models: { providers: { fake: { baseUrl: model.url, api: 'openai-chat' } } },
    },
  });
});

afterAll(async () => {
  await hookd?.stop();
  await model?.close();
  temp.cleanup();
});

interface Fixture {
  readonly headers: Record<string, string>;
  readonly body: unknown;
  readonly options?: object;
  readonly expect: readonly { kind: 'wake' | 'agent'; text?: string; message?: string; mode?: string }[] | null;
}

const fixture = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as Fixture;

/** The model calls (agent turns, or heartbeats carrying a wake) whose prompt holds `text`. */
const turnsWith = (text: string) =>
  model.requests.filter((r) => r.messages.some((m) => String(m.content).includes(text)));

/** Slack's documented recipe: v0=HMAC-SHA256(secret, "v0:" + timestamp + ":" + body). */
const slackHeaders = (secret: string, raw: string) => {
  const ts = String(Math.floor(Date.now() / 1000));
  const signature = createHmac('sha256', secret).update(`v0:${ts}:${raw}`).digest('hex');
  return { 'X-Slack-Request-Timestamp': ts, 'X-Slack-Signature': `v0=${signature}` };
};

/** Credentials for `raw` as each scheme's sender makes them, with the provider's own libraries. */
const SIGNERS: Record<string, (secret: string, raw: string, headers: Record<string, string>) => Promise<object>> = {
  github: async (secret, raw) => ({ 'X-Hub-Signature-256': await signGitHub(secret, raw) }),
  stripe: async (secret, raw) => ({
    'Stripe-Signature': new Stripe('sk_test_unused').webhooks.generateTestHeaderString({ payload: raw, secret }),
  }),
  'standard-webhooks': async (secret, raw, headers) => {
    // Svix-hosted senders send the same headers with the `svix-` prefix.
    const prefix = headers['svix-id'] ? 'svix' : 'webhook';
    const id = headers[`${prefix}-id`] ?? `msg_e2e_${createHash('sha256').update(raw).digest('hex').slice(0, 16)}`;
    const at = new Date();
    return {
      [`${prefix}-id`]: id,
      [`${prefix}-timestamp`]: String(Math.floor(at.getTime() / 1000)),
      [`${prefix}-signature`]: new Webhook(secret).sign(id, at, raw),
    };
  },
  slack: async (secret, raw) => slackHeaders(secret, raw),
  // GitLab sends its secret token as it is.
  gitlab: async (secret) => ({ 'X-Gitlab-Token': secret }),
};

/** Schemes whose credential is a token compared as it is: a tampered request carries another one. */
const TOKEN_SCHEMES: Record<string, (headers: Record<string, string>) => Record<string, string>> = {
  gitlab: (headers) => ({ ...headers, 'X-Gitlab-Token': 'not-the-token' }),
};

/** Headers that identify a delivery, so that a repeat is deduplicated without an Idempotency-Key. */
const deliveryIdOf = (scheme: string | undefined, headers: Record<string, string>, body: unknown) =>
  (scheme === 'github' && headers['X-GitHub-Delivery']) ||
  (scheme === 'standard-webhooks' && (headers['webhook-id'] ?? headers['svix-id'])) ||
  (scheme === 'stripe' && (body as { id?: string }).id);

const CASES = PRESETS.flatMap((preset) =>
  preset.fixtures
    .map(({ name }) => join(preset.dir, name))
    // A fixture with options of its own runs in the unit contract (test/unit/presets.test.ts),
    // where each fixture gets its own engine; here one gateway enables each preset once.
    .filter((file) => fixture(file).options === undefined)
    .map((file) => [`${preset.name} ${basename(file)}`, preset.name, file] as const),
);

describe('every built-in preset end to end', () => {
  it('finds every preset and fixture', () => {
    expect(new Set(CASES.map(([, name]) => name))).toEqual(new Set(PRESETS.map((p) => p.name)));
    expect(CASES.length).toBeGreaterThanOrEqual(30);
  });

  it.each(CASES)('%s: becomes its expected actions; tampered, 401; repeated, deduplicated', async (_, name, file) => {
    const f = fixture(file);
    const scheme = schemeOf(name);
    const raw = typeof f.body === 'string' ? f.body : JSON.stringify(f.body);
    const sign = scheme ? SIGNERS[scheme] : undefined;
    if (scheme && !sign) throw new Error(`no signer for the ${scheme} scheme`);
    const key = { 'idempotency-key': `e2e:${name}:${file}` };
    const credentials = sign ? await sign(SECRETS[name] as string, raw, f.headers) : { ...bearer, ...key };
    const headers = { ...f.headers, ...credentials };
    const post = (body: string, using = headers): Promise<Answer> =>
      call(`${hookd.url}/hooks/${name}`, { headers: using, body });

    const first = await post(raw);
    const actions = f.expect ?? [];
    const isChallenge = (f.body as { type?: string }).type === 'url_verification';
    const status = isChallenge ? 200 : actions.length === 0 ? 204 : actions.some((a) => a.kind === 'agent') ? 202 : 200;
    expect(first.status, first.text).toBe(status);
    // Each agent turn, and each wake a heartbeat shows now, reaches the model once.
    const shown = actions.filter((a) => a.kind === 'agent' || (a.mode ?? 'now') === 'now');
    for (const action of shown) {
      const text = (action.kind === 'agent' ? action.message : action.text) ?? '';
      await expect.poll(() => turnsWith(text).length).toBeGreaterThanOrEqual(1);
    }

    // Each case's refusal comes from an address of its own (the gateway trusts one proxy hop):
    // a refusal counts toward its address's lock, and the cases together would pass 20.
    const from = { 'x-forwarded-for': `10.0.${CASES.findIndex((c) => c[2] === file)}.1` };
    const tamperToken = scheme ? TOKEN_SCHEMES[scheme] : undefined;
    const refused = tamperToken
      ? await post(raw, { ...tamperToken(headers), ...from })
      : sign
        ? await post(`${raw} `, { ...headers, ...from })
        : await post(raw, { ...headers, ...from, authorization: 'Bearer not-the-hook-token-0123' });
    expect(refused.status, refused.text).toBe(401);

    if (first.status === 204 || isChallenge || (sign && !deliveryIdOf(scheme, f.headers, f.body))) return;
    const again = await post(raw);
    expect(again.status).toBe(first.status);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
  });
});

describe('the standard-webhooks preset', () => {
  it('answers a resend of a message id with another body 409, naming the delivery id, not an Idempotency-Key', async () => {
    const id = 'msg_2KWPD0fJr9WvP2WbKTc9yP7A1bN';
    const send = async (data: object) => {
      const raw = JSON.stringify({ type: 'order.updated', timestamp: '2026-11-22T10:00:00Z', data });
      const at = new Date();
      return call(`${hookd.url}/hooks/standard-webhooks`, {
        headers: {
          'content-type': 'application/json',
          'webhook-id': id,
          'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
          'webhook-signature': new Webhook(SECRETS['standard-webhooks'] as string).sign(id, at, raw),
        },
        body: raw,
      });
    };
    expect((await send({ id: 'ord_1', status: 'paid' })).status).toBe(202);
    const conflict = await send({ id: 'ord_1', status: 'refunded' });
    expect(conflict.status).toBe(409);
    expect(conflict.body).toEqual({
      ok: false,
      code: 'IDEMPOTENCY_CONFLICT',
      error: 'this delivery id was already received with a different body (each message needs its own id)',
    });
  });

  it('runs a captured delivery once, whatever Idempotency-Key it is sent again with', async () => {
    const id = 'msg_captured_0001';
    const raw = JSON.stringify({ type: 'order.updated', timestamp: '2026-11-22T10:00:00Z', data: { id: 'ord_9' } });
    const at = new Date();
    const signed = {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': new Webhook(SECRETS['standard-webhooks'] as string).sign(id, at, raw),
    };
    const send = (extra: Record<string, string> = {}) =>
      call(`${hookd.url}/hooks/standard-webhooks`, { headers: { ...signed, ...extra }, body: raw });
    const first = await send();
    expect(first.status).toBe(202);
    // Within the signature's tolerance, someone holding the delivery sends it again with keys of
    // their own: each is the same delivery, answered as the first was, running nothing.
    const keys: Record<string, string>[] = [
      { 'idempotency-key': 'a1' },
      { 'idempotency-key': 'a2' },
      { 'x-service-idempotency-key': 'a3' },
    ];
    for (const extra of keys) {
      const again = await send(extra);
      expect(again.status).toBe(202);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toEqual(first.body);
    }
  });
});

describe('the slack preset', () => {
  it('answers a replay of its URL check with the challenge again, running nothing, as live', async () => {
    const raw = JSON.stringify({ token: 'x', challenge: 'replayed-challenge', type: 'url_verification' });
    const headers = { 'content-type': 'application/json', ...slackHeaders(SECRETS.slack as string, raw) };
    const live = await call(`${hookd.url}/hooks/slack`, { headers, body: raw });
    expect(live.status).toBe(200);
    expect(live.body).toEqual({ challenge: 'replayed-challenge' });
    const admin = { authorization: `Bearer ${GATEWAY_TOKEN}` };
    const replayOf = (id: unknown) => call(`${hookd.url}/api/requests/${id}/replay`, { headers: admin });
    const replay = await replayOf(live.headers['x-request-id']);
    expect(replay.status, replay.text).toBe(200);
    expect(replay.body).toEqual({ challenge: 'replayed-challenge' });
    // Answered 2xx, the original is marked replayed; the replay's own record is replayable too.
    const original = await call(`${hookd.url}/api/requests/${live.headers['x-request-id']}`, {
      method: 'GET',
      headers: admin,
    });
    expect(original.body).toHaveProperty('replayedAt');
    const again = await replayOf(replay.headers['x-request-id']);
    expect(again.status, again.text).toBe(200);
    expect(again.body).toEqual({ challenge: 'replayed-challenge' });
  });
});
