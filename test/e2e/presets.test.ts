import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sign as signGitHub } from '@octokit/webhooks-methods';
import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeModel, lastUser, startFakeModel } from '../helpers/fake-model.js';
import { type HookdProcess, makeTempDir, ROOT, startHookd } from '../helpers/hookd-process.js';
import { type Answer, call } from '../helpers/http.js';

/**
 * Each built-in preset end to end (issue 14): a recorded delivery signed the way the
 * provider's own library signs it reaches a spawned gateway and becomes the expected run or
 * event; a tampered body is 401; the same delivery again is deduplicated.
 */
const SECRETS = {
  github: "It's a Secret to Everybody",
  gitlab: 'gitlab-secret-token-0123',
  slack: '8f742231b10e8888abcd99yyyzzz85a5',
  stripe: 'whsec_test_0123456789abcdef',
  'standard-webhooks': `whsec_${Buffer.from('standard-webhooks-key').toString('base64')}`,
};
const HOOK_TOKEN = 'preset-hook-token-0123456789';

let model: FakeModel;
let hookd: HookdProcess;
const temp = makeTempDir();

beforeAll(async () => {
  model = await startFakeModel((request) => `seen: ${lastUser(request).length} characters`);
  hookd = await startHookd({
    dir: temp.dir,
    config: {
      hooks: {
        enabled: true,
        token: HOOK_TOKEN,
        // Enabling a signed preset: its name and its secret; the others by name.
        presets: [
          ...Object.entries(SECRETS).map(([name, secret]) => ({ name, secret })),
          'alertmanager',
          'grafana',
          'mail',
        ],
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

const fixture = (preset: string, name: string) =>
  JSON.parse(readFileSync(join(ROOT, 'presets', preset, 'fixtures', name), 'utf8')) as {
    headers: Record<string, string>;
    body: unknown;
  };

/** The model calls (agent turns, or heartbeats carrying a wake) whose prompt holds `text`. */
const turnsWith = (text: string) =>
  model.requests.filter((r) => r.messages.some((m) => String(m.content).includes(text)));

interface Case {
  readonly preset: string;
  readonly fixture: string;
  /** The provider library's signature headers for this body (or the sender's credentials). */
  readonly sign: (raw: string) => Promise<Record<string, string>>;
  /** What the run's prompt (or the heartbeat's, for a wake) holds. */
  readonly expected: string;
  /** 202 for an agent run, 200 for a wake. */
  readonly status?: number;
  /** A request the gateway must refuse 401: a tampered body, or a wrong token for senders that sign nothing. */
  readonly refused?: (
    raw: string,
    headers: Record<string, string>,
  ) => { body: string; headers: Record<string, string> };
  /** False for senders whose protocol carries no delivery id (nothing to deduplicate on). */
  readonly dedupes?: boolean;
}

/** Slack's documented recipe: v0=HMAC-SHA256(secret, "v0:" + timestamp + ":" + body). */
const slackHeaders = (raw: string) => {
  const ts = String(Math.floor(Date.now() / 1000));
  const signature = createHmac('sha256', SECRETS.slack).update(`v0:${ts}:${raw}`).digest('hex');
  return { 'X-Slack-Request-Timestamp': ts, 'X-Slack-Signature': `v0=${signature}` };
};
const bearer = { authorization: `Bearer ${HOOK_TOKEN}` };
const wrongToken = (raw: string, headers: Record<string, string>) => ({
  body: raw,
  headers: { ...headers, authorization: 'Bearer not-the-hook-token-0123' },
});

const cases: Case[] = [
  {
    preset: 'github',
    fixture: 'push.json',
    sign: async (raw) => ({ 'X-Hub-Signature-256': await signGitHub(SECRETS.github, raw) }),
    expected: 'monalisa pushed 2 commits to main of octocat/Hello-World',
  },
  {
    preset: 'stripe',
    fixture: 'payment-intent-succeeded.json',
    sign: async (raw) => ({
      'Stripe-Signature': new Stripe('sk_test_unused').webhooks.generateTestHeaderString({
        payload: raw,
        secret: SECRETS.stripe,
      }),
    }),
    expected: 'Stripe: A payment of 20.00 USD succeeded',
  },
  {
    preset: 'standard-webhooks',
    fixture: 'invoice-paid.json',
    sign: async (raw) => {
      const id = 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W';
      const at = new Date();
      const signature = new Webhook(SECRETS['standard-webhooks']).sign(id, at, raw);
      return {
        'webhook-id': id,
        'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
        'webhook-signature': signature,
      };
    },
    expected: 'invoice.paid',
  },
  {
    preset: 'slack',
    fixture: 'app-mention.json',
    sign: async (raw) => slackHeaders(raw),
    expected: 'Slack: <@U061F7AUR> mentioned the app in <#C123ABC456>',
  },
  {
    preset: 'gitlab',
    fixture: 'merge-request-opened.json',
    // GitLab sends its secret token as it is; a wrong one is what a tampered request looks like.
    sign: async () => ({ 'X-Gitlab-Token': SECRETS.gitlab }),
    refused: (raw, headers) => ({ body: raw, headers: { ...headers, 'X-Gitlab-Token': 'not-the-token' } }),
    expected: 'root opened merge request !1 "MS-Viewport"',
  },
  {
    preset: 'mail',
    fixture: 'one-message.json',
    // The mail watcher posts with the hook token and an Idempotency-Key of the batch's UIDs.
    sign: async () => ({ ...bearer, 'idempotency-key': 'mail:1700:42-42' }),
    refused: wrongToken,
    expected: 'New email from "Ada Lovelace" <ada@example.org>',
  },
  {
    preset: 'alertmanager',
    fixture: 'firing-group.json',
    sign: async () => bearer,
    refused: wrongToken,
    status: 200,
    dedupes: false,
    expected: 'Alertmanager: [FIRING:2] HighLatency (service=api)',
  },
  {
    preset: 'grafana',
    fixture: 'firing.json',
    sign: async () => bearer,
    refused: wrongToken,
    status: 200,
    dedupes: false,
    expected: 'Grafana: [FIRING:2] High memory usage (blue)',
  },
];

describe.each(cases.map((c) => [c.preset, c] as const))('the %s preset end to end', (_name, c) => {
  it('runs a recorded delivery signed as the provider signs it; a tampered one is 401; a repeat is deduplicated', async () => {
    const { headers, body } = fixture(c.preset, c.fixture);
    const raw = JSON.stringify(body);
    const signed = await c.sign(raw);
    const post = (text: string): Promise<Answer> =>
      call(`${hookd.url}/hooks/${c.preset}`, { headers: { ...headers, ...signed }, body: text });

    const first = await post(raw);
    expect(first.status).toBe(c.status ?? 202);
    await expect.poll(() => turnsWith(c.expected).length).toBe(1);

    const bad = c.refused?.(raw, { ...headers, ...signed }) ?? { body: `${raw} `, headers: { ...headers, ...signed } };
    const tampered = await call(`${hookd.url}/hooks/${c.preset}`, bad);
    expect(tampered.status).toBe(401);
    if (!c.refused) expect(tampered.body).toMatchObject({ code: 'SIGNATURE_INVALID' });
    if (c.dedupes === false) return;

    const again = await post(raw);
    expect(again.status).toBe(c.status ?? 202);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(turnsWith(c.expected)).toHaveLength(1);
  });
});

describe('the github preset', () => {
  it('answers a signed ping 204, storing nothing', async () => {
    const { headers, body } = fixture('github', 'ping.json');
    const raw = JSON.stringify(body);
    const pong = await call(`${hookd.url}/hooks/github`, {
      headers: { ...headers, 'X-Hub-Signature-256': await signGitHub(SECRETS.github, raw) },
      body: raw,
    });
    expect(pong.status).toBe(204);
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
          'webhook-signature': new Webhook(SECRETS['standard-webhooks']).sign(id, at, raw),
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
});
