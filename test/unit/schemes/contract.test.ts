import { createHmac, randomUUID } from 'node:crypto';
import { sign as signGitHub, verify as verifyGitHub } from '@octokit/webhooks-methods';
import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CREDENTIAL_HEADERS } from '../../../src/headers.js';
import { createLogger } from '../../../src/log.js';
import {
  type SignatureScheme,
  signatureHeadersOf,
  signatureSchemes,
  signDelivery,
  type VerifyConfig,
  verifySignature,
} from '../../../src/schemes/index.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { until } from '../../helpers/clock.js';

/**
 * The contract every signature scheme keeps (docs/security.md#provider-signatures), one suite
 * over each registered scheme: what it signs it verifies, and so does its sender's own library
 * (or documented recipe); what its provider's library signs it accepts; through the gateway, a
 * wrong secret, a tampered body and a stale timestamp are refused 401 `SIGNATURE_INVALID`, and
 * the headers it names are masked in the stored record and in a log line. A new scheme is a
 * module and an entry here (docs/presets.md#adding-a-signature-scheme).
 */
interface Subject {
  readonly config: VerifyConfig;
  /** Whether the signature covers the body (GitLab's token does not: a changed body still passes). */
  readonly coversBody: boolean;
  /** Whether it signs a timestamp, so that a delivery signed long ago is refused. */
  readonly timestamped: boolean;
  /** The sender's own signing: its provider's library where one is a devDependency, else its documented recipe. */
  sender(config: VerifyConfig, raw: Buffer, nowSeconds: number): Promise<Record<string, string>>;
  /** The provider's library verifying what hookd signs, where it has one. */
  library?(config: VerifyConfig, headers: Record<string, string>, raw: Buffer, nowSeconds: number): Promise<boolean>;
  /** The id to dedupe on that verifying hands back, given the signed headers and body. */
  readonly dedupesOn?: (headers: Record<string, string>) => string;
  /** Its signature header is the mapping's own (`verify.header`): masked by each mapping's settings, not by name. */
  readonly headerOfSettings?: true;
  /** A handshake the gateway answers before any mapping once the signature holds. */
  readonly handshake?: { readonly payload: object; readonly answer: object };
}

const stripeApi = new Stripe('sk_test_unused');
/** Stripe's library throws on a bad signature; here, a yes or no. */
const stripeAccepts = (raw: Buffer, header: string | undefined, secret: string, nowSeconds: number) => {
  try {
    return stripeApi.webhooks.signature?.verifyHeader(raw, header ?? '', secret, 300, undefined, nowSeconds * 1000);
  } catch {
    return false;
  }
};
/** The Standard Webhooks library for a secret: a `whsec_` one is a base64 key, any other its own bytes. */
const webhookOf = (secret: string) =>
  secret.startsWith('whsec_') ? new Webhook(secret) : new Webhook(new TextEncoder().encode(secret), { format: 'raw' });
const hex = (algorithm: string, key: string, data: string, encoding: 'hex' | 'base64' = 'hex') =>
  createHmac(algorithm, key).update(data).digest(encoding);

const standardWebhooks = (secret: string): Subject => ({
  config: { scheme: 'standard-webhooks', secret },
  coversBody: true,
  timestamped: true,
  sender: async (config, raw, nowSeconds) => {
    const id = `msg_${randomUUID().replace(/-/g, '')}`;
    const signature = webhookOf(config.secret).sign(id, new Date(nowSeconds * 1000), raw);
    return { 'webhook-id': id, 'webhook-timestamp': String(nowSeconds), 'webhook-signature': signature };
  },
  // The library checks the timestamp against the real clock: signed now, it is fresh.
  library: async (config, headers, raw) => {
    try {
      webhookOf(config.secret).verify(raw, headers);
      return true;
    } catch {
      return false;
    }
  },
  dedupesOn: (headers) => headers['webhook-id'] as string,
});

const SUBJECTS: Record<string, Subject> = {
  github: {
    config: { scheme: 'github', secret: "It's a Secret to Everybody" },
    coversBody: true,
    timestamped: false,
    sender: async (config, raw) => ({
      'x-hub-signature-256': await signGitHub(config.secret, raw.toString()),
      'x-github-delivery': randomUUID(),
    }),
    library: (config, headers, raw) =>
      verifyGitHub(config.secret, raw.toString(), headers['x-hub-signature-256'] as string),
    dedupesOn: (headers) => headers['x-github-delivery'] as string,
  },
  gitlab: {
    config: { scheme: 'gitlab', secret: 'gitlab-secret-token-0123' },
    coversBody: false,
    timestamped: false,
    // GitLab sends its secret token as it is, and a UUID per event.
    sender: async (config) => ({ 'x-gitlab-token': config.secret, 'x-gitlab-event-uuid': randomUUID() }),
    dedupesOn: (headers) => headers['x-gitlab-event-uuid'] as string,
  },
  stripe: {
    config: { scheme: 'stripe', secret: 'whsec_test_0123456789abcdef' },
    coversBody: true,
    timestamped: true,
    sender: async (config, raw, nowSeconds) => ({
      'stripe-signature': stripeApi.webhooks.generateTestHeaderString({
        payload: raw.toString(),
        secret: config.secret,
        timestamp: nowSeconds,
      }),
    }),
    library: async (config, headers, raw, nowSeconds) =>
      stripeAccepts(raw, headers['stripe-signature'], config.secret, nowSeconds) === true,
    dedupesOn: () => 'evt_contract',
  },
  slack: {
    config: { scheme: 'slack', secret: '8f742231b10e8888abcd99yyyzzz85a5' },
    coversBody: true,
    timestamped: true,
    // Slack's documented recipe: v0=HMAC-SHA256(secret, "v0:" + timestamp + ":" + body).
    sender: async (config, raw, nowSeconds) => ({
      'x-slack-request-timestamp': String(nowSeconds),
      'x-slack-signature': `v0=${hex('sha256', config.secret, `v0:${nowSeconds}:${raw}`)}`,
    }),
    dedupesOn: () => 'Ev_contract',
    handshake: { payload: { type: 'url_verification', challenge: 'c-123' }, answer: { challenge: 'c-123' } },
  },
  'standard-webhooks (a whsec_ key)': standardWebhooks(
    `whsec_${Buffer.from('standard-webhooks-key').toString('base64')}`,
  ),
  'standard-webhooks (a plain secret)': standardWebhooks('plain-secret'),
  hmac: {
    config: { scheme: 'hmac', secret: 'hmac-secret' },
    coversBody: true,
    timestamped: false,
    sender: async (config, raw) => ({ 'x-signature': hex('sha256', config.secret, raw.toString()) }),
    headerOfSettings: true,
  },
  'hmac (its header, algorithm, encoding and prefix)': {
    config: {
      scheme: 'hmac',
      secret: 'hmac-own-secret',
      header: 'X-Sig',
      algorithm: 'sha512',
      encoding: 'base64',
      prefix: 'sha512=',
    },
    coversBody: true,
    timestamped: false,
    sender: async (config, raw) => ({ 'x-sig': `sha512=${hex('sha512', config.secret, raw.toString(), 'base64')}` }),
    headerOfSettings: true,
  },
};

const body = (label: string) =>
  Buffer.from(JSON.stringify({ id: 'evt_contract', event_id: 'Ev_contract', type: 'contract', label }));
const nowSeconds = () => Math.floor(Date.now() / 1000);
/** Another secret: for a `whsec_` one, another base64 key (a letter more may decode to the same key). */
const otherSecret = (secret: string) =>
  secret.startsWith('whsec_') ? `whsec_${Buffer.from('another key').toString('base64')}` : `${secret}-other`;
const schemeOf = (config: VerifyConfig) => signatureSchemes.find((s) => s.name === config.scheme) as SignatureScheme;

it('has an entry for every registered scheme, and no entry for a scheme that is not registered', () => {
  const covered = new Set(Object.values(SUBJECTS).map((subject) => subject.config.scheme));
  expect([...covered].sort()).toEqual(signatureSchemes.map((scheme) => scheme.name).sort());
});

describe.each(Object.entries(SUBJECTS))('the signature scheme contract: %s', (_label, subject) => {
  const { config } = subject;
  const raw = body('signed');

  it('verifies what it signs and what its sender signs, handing back the id to dedupe on', async () => {
    const now = nowSeconds();
    for (const headers of [signDelivery(config, raw, { nowSeconds: now }), await subject.sender(config, raw, now)]) {
      const verified = verifySignature(config, headers, raw, now);
      expect(verified).toEqual({ ok: true, ...(subject.dedupesOn ? { webhookId: subject.dedupesOn(headers) } : {}) });
    }
  });

  it.runIf(subject.library !== undefined)("signs what its provider's own library accepts", async () => {
    const now = nowSeconds();
    const library = subject.library as NonNullable<Subject['library']>;
    expect(await library(config, signDelivery(config, raw, { nowSeconds: now }), raw, now)).toBe(true);
    const forged = signDelivery({ ...config, secret: otherSecret(config.secret) }, raw, { nowSeconds: now });
    expect(await library(config, forged, raw, now)).toBe(false);
  });

  it('names every header it signs, and its credential headers are among them', () => {
    const scheme = schemeOf(config);
    const signed = Object.keys(signDelivery(config, raw));
    const named = [...scheme.headers, ...scheme.signatureHeaders(config)];
    expect(signed.filter((name) => !named.includes(name))).toEqual([]);
    expect(signatureHeadersOf(config).some((name) => signed.includes(name))).toBe(true);
    for (const name of scheme.masks.headers) expect(CREDENTIAL_HEADERS.has(name)).toBe(true);
    if (!subject.headerOfSettings)
      expect(scheme.masks.headers).toEqual(expect.arrayContaining([...signatureHeadersOf(config)]));
  });

  it('puts none of its masked headers in a log line, and no secret', () => {
    const lines: string[] = [];
    const log = createLogger({ level: 'info', destination: { write: (line: string) => lines.push(line) } });
    const headers = signDelivery(config, raw);
    log.info({ headers, req: { headers } }, 'a signed request');
    const line = JSON.parse(lines[0] as string) as { headers: Record<string, string>; req: typeof line };
    const { masks } = schemeOf(config);
    for (const name of masks.headers.filter((h) => h in headers)) expect(line.headers[name]).toBe('[redacted]');
    for (const name of masks.secrets ?? []) expect(line.req.headers[name]).toBe('[redacted]');
    expect(lines[0]).not.toContain(config.secret);
  });

  describe('through the gateway', () => {
    let t: TestApp;
    beforeAll(async () => {
      const mapping = { id: 'signed', match: { path: 'signed' }, verify: config, action: 'wake', textTemplate: 'x' };
      t = await createTestApp({ hooks: { mappings: [mapping] } });
    });
    afterAll(() => t.close());

    const post = (headers: Record<string, string>, payload: Buffer) =>
      t.app.inject({
        method: 'POST',
        url: '/hooks/signed',
        headers: { ...headers, 'content-type': 'application/json' },
        payload,
      });
    const refusal = (reason: RegExp | string) => ({
      ok: false,
      code: 'SIGNATURE_INVALID',
      error: expect.stringMatching(typeof reason === 'string' ? `^invalid webhook signature: ${reason}` : reason),
    });

    it('admits a signed delivery and masks its credential headers in the record, marked verified', async () => {
      const headers = await subject.sender(config, raw, nowSeconds());
      expect((await post(headers, raw)).statusCode).toBe(200);
      const rows = () => t.store.db.prepare('SELECT headers, credentials FROM requests').all() as { headers: string }[];
      await until(() => rows().length === 1);
      const [row] = rows() as { headers: string; credentials: string }[];
      const stored = JSON.parse(row?.headers as string) as Record<string, string>;
      const masked = [...schemeOf(config).masks.headers, ...signatureHeadersOf(config)].filter((h) => h in headers);
      expect(masked.length).toBeGreaterThan(0);
      for (const name of masked) expect(stored[name]).toBe('[masked]');
      const marks = JSON.parse(row?.credentials as string) as Record<string, { verified: boolean }>;
      for (const name of signatureHeadersOf(config).filter((h) => h in headers))
        expect(marks[name]).toEqual({ verified: true });
      expect(row?.headers).not.toContain(config.secret);
      for (const name of masked) expect(JSON.stringify(row)).not.toContain(headers[name]);
    });

    it('refuses a wrong secret 401 SIGNATURE_INVALID, saying what to fix but not the expected value', async () => {
      const now = nowSeconds();
      const forged = await subject.sender({ ...config, secret: otherSecret(config.secret) }, raw, now);
      const answer = await post(forged, raw);
      expect(answer.statusCode).toBe(401);
      expect(answer.json()).toEqual(refusal(/^invalid webhook signature: .*(no signature matched|does not match)/));
      // What the right secret signs for the same delivery (its id and time): never in the answer.
      const expected = signDelivery(config, raw, { nowSeconds: now, recorded: forged });
      for (const name of signatureHeadersOf(config).filter((h) => h in expected))
        expect(answer.body).not.toContain((expected[name] as string).replace(/^\w+[=,]/, ''));
    });

    it(`${subject.coversBody ? 'refuses' : 'admits (its check does not cover the body)'} a tampered body`, async () => {
      const headers = await subject.sender(config, raw, nowSeconds());
      const answer = await post(headers, body('tampered'));
      if (subject.coversBody) {
        expect(answer.statusCode).toBe(401);
        expect(answer.json()).toEqual(refusal('no signature matched'));
      } else expect(answer.statusCode).toBe(200);
    });

    it(`${subject.timestamped ? 'refuses' : 'admits (it signs no time)'} a delivery signed 1000 s ago`, async () => {
      const stale = await subject.sender(config, body('stale'), nowSeconds() - 1000);
      const answer = await post(stale, body('stale'));
      if (subject.timestamped) {
        expect(answer.statusCode).toBe(401);
        expect(answer.json()).toEqual(
          refusal(/^invalid webhook signature: the timestamp is 10\d\d s old; the tolerance is 300 s$/),
        );
      } else expect(answer.statusCode).toBe(200);
    });

    it.runIf(subject.handshake !== undefined)(
      'answers its handshake before any mapping once the signature holds',
      async () => {
        const { payload, answer } = subject.handshake as NonNullable<Subject['handshake']>;
        const handshake = Buffer.from(JSON.stringify(payload));
        const signed = await post(await subject.sender(config, handshake, nowSeconds()), handshake);
        expect(signed.statusCode).toBe(200);
        expect(signed.json()).toEqual(answer);
        const unsigned = await post({}, handshake);
        expect(unsigned.statusCode).toBe(401);
      },
    );
  });
});
